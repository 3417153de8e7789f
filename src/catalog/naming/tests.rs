use std::collections::HashMap;

use super::*;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn method_of(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "PUT" => "PUT",
        "POST" => "POST",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        other => panic!("unexpected method {other}"),
    }
}

/// A request with an operationId.
fn op(operation_id: &str, method: &str, path: &str) -> NameRequest {
    let method = method_of(method);
    NameRequest {
        operation_id: Some(operation_id.to_string()),
        identity: format!("{method} {path}"),
        method,
        path: path.to_string(),
    }
}

/// A request without an operationId.
fn anonymous(method: &str, path: &str) -> NameRequest {
    let method = method_of(method);
    NameRequest {
        operation_id: None,
        identity: format!("{method} {path}"),
        method,
        path: path.to_string(),
    }
}

fn names(named: &[Named]) -> Vec<&str> {
    named.iter().map(|n| n.name.as_str()).collect()
}

fn by_identity(requests: &[NameRequest], named: &[Named]) -> BTreeMap<String, Named> {
    assert_eq!(requests.len(), named.len(), "one name per request");
    requests
        .iter()
        .zip(named)
        .map(|(r, n)| (r.identity.clone(), n.clone()))
        .collect()
}

fn assert_all_valid_and_unique(named: &[Named], max_len: usize) {
    let mut seen = HashSet::new();
    for n in named {
        assert!(
            is_valid_tool_name(&n.name, max_len),
            "invalid tool name {:?} (max {max_len})",
            n.name
        );
        assert!(
            !n.name.ends_with(['_', '-']),
            "name ends with a separator: {:?}",
            n.name
        );
        assert!(seen.insert(n.name.clone()), "duplicate name {:?}", n.name);
    }
}

fn is_separator(c: char) -> bool {
    c == '_' || c == '-' || c == '.'
}

/// Splits a name into words independently of `words()`: at separators and before an
/// upper-case letter that follows a lower-case letter or digit. Good enough for the
/// inputs used here (no acronyms).
fn simple_words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if is_separator(c) {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous = None;
            continue;
        }
        let boundary = c.is_ascii_uppercase()
            && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(c);
        previous = Some(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// True when `output_word` is `input_word` itself or its known abbreviation.
fn same_or_abbreviated(input_word: &str, output_word: &str) -> bool {
    if input_word == output_word {
        return true;
    }
    let long = input_word.to_ascii_lowercase();
    let short = output_word.to_ascii_lowercase();
    ABBREVIATIONS.iter().any(|(l, s)| *l == long && *s == short)
        && input_word.chars().next().map(|c| c.is_ascii_uppercase())
            == output_word.chars().next().map(|c| c.is_ascii_uppercase())
}

/// The readable-shortening contract for `output = shorten(input, max)` where the input has
/// at least two words and its first word fits: the output is a valid name within the
/// limit, does not end in a separator, keeps the first and the last word, and consists
/// of whole input words (or their abbreviations) in their original order.
fn assert_readable(input: &str, output: &str, max: usize) {
    assert!(
        is_valid_tool_name(output, max),
        "{input:?} -> {output:?}: not a valid name of at most {max}"
    );
    assert!(
        !output.ends_with(['_', '-', '.']) && !output.starts_with(['_', '-', '.']),
        "{input:?} -> {output:?}: starts or ends with a separator"
    );
    let input_words = simple_words(input);
    let output_words = simple_words(output);
    assert!(
        same_or_abbreviated(&input_words[0], &output_words[0]),
        "{input:?} -> {output:?}: first word lost"
    );
    assert!(
        output_words.len() >= 2,
        "{input:?} -> {output:?}: last word lost"
    );
    assert!(
        same_or_abbreviated(
            input_words.last().expect("input has words"),
            output_words.last().expect("output has words")
        ),
        "{input:?} -> {output:?}: last word lost"
    );
    assert_whole_words_in_order(input, output, &input_words, &output_words);
}

fn assert_whole_words_in_order(
    input: &str,
    output: &str,
    input_words: &[String],
    output_words: &[String],
) {
    let mut next = 0;
    for word in output_words {
        let found = input_words[next..]
            .iter()
            .position(|w| same_or_abbreviated(w, word));
        match found {
            Some(offset) => next += offset + 1,
            None => panic!(
                "{input:?} -> {output:?}: {word:?} is not a whole word (or abbreviation) \
                 of the input in order"
            ),
        }
    }
}

/// Small deterministic PRNG (xorshift64*), so no test depends on a `rand` crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

// Real long operationIds, hard-coded from the shared specs (GitHub, Kubernetes, Box).
const REAL_LONG_IDS: [&str; 14] = [
    "packages/get-all-package-versions-for-package-owned-by-authenticated-user",
    "orgs/custom-properties-for-repos-create-or-update-organization-definitions",
    "orgs/custom-properties-for-repos-create-or-update-organization-definition",
    "copilot/list-copilot-coding-agent-selected-repositories-for-organization",
    "packages/list-docker-migration-conflicting-packages-for-authenticated-user",
    "DeleteCustomersCustomerSubscriptionsSubscriptionExposedIdDiscount",
    "watchAdmissionregistrationV1alpha1ValidatingAdmissionPolicyBindingList",
    "deleteAdmissionregistrationV1alpha1CollectionValidatingAdmissionPolicyBinding",
    "deleteFlowcontrolApiserverV1beta3CollectionPriorityLevelConfiguration",
    "replaceFlowcontrolApiserverV1beta2PriorityLevelConfigurationStatus",
    "deleteAdmissionregistrationV1CollectionMutatingWebhookConfiguration",
    "get_retention_policy_assignments_id_file_versions_under_retention",
    "get_legal_hold_policy_assignments_id_file_versions_on_hold",
    "put_files_id#add_shared_link",
];

// ---------------------------------------------------------------------------------------
// Real operationIds
// ---------------------------------------------------------------------------------------

#[test]
fn github_package_versions_id_is_sanitized_and_shortened_readably() {
    let id = "packages/get-all-package-versions-for-package-owned-by-authenticated-user";
    assert_eq!(id.len(), 73);
    let named = assign(
        &[op(id, "GET", "/user/packages/{type}/{name}/versions")],
        "",
        64,
    );
    assert_eq!(
        named[0].name,
        "packages_get-all-package-versions-package-owned-authed-user"
    );
    assert_eq!(
        named[0].changes,
        vec![NameChange::Sanitized, NameChange::Shortened]
    );
    assert_readable(&sanitize(id, false), &named[0].name, 64);
}

#[test]
fn github_custom_properties_id_is_shortened_readably() {
    let id = "orgs/custom-properties-for-repos-create-or-update-organization-definitions";
    let sanitized = sanitize(id, false);
    assert_eq!(
        sanitized,
        "orgs_custom-properties-for-repos-create-or-update-organization-definitions"
    );
    let at_64 = shorten(&sanitized, 64);
    assert_eq!(
        at_64,
        "orgs_custom-properties-repos-create-or-update-org-definitions"
    );
    assert_readable(&sanitized, &at_64, 64);
    let at_32 = shorten(&sanitized, 32);
    assert_eq!(at_32, "orgs_custom-properties-org-defs");
    assert_readable(&sanitized, &at_32, 32);
}

#[test]
fn stripe_camel_case_id_within_limit_is_untouched() {
    let id = "GetCustomersCustomerSubscriptionsSubscriptionExposedIdDiscount";
    let named = assign(
        &[op(
            id,
            "GET",
            "/v1/customers/{customer}/subscriptions/{subscription_exposed_id}/discount",
        )],
        "",
        64,
    );
    assert_eq!(named[0].name, id);
    assert!(named[0].changes.is_empty(), "{:?}", named[0].changes);
}

#[test]
fn stripe_camel_case_id_over_limit_drops_a_whole_word() {
    let id = "DeleteCustomersCustomerSubscriptionsSubscriptionExposedIdDiscount";
    assert_eq!(id.len(), 65);
    let named = assign(
        &[op(
            id,
            "DELETE",
            "/v1/customers/{customer}/subscriptions/{subscription_exposed_id}/discount",
        )],
        "",
        64,
    );
    assert_eq!(
        named[0].name,
        "DeleteCustomersCustomerSubscriptionsExposedIdDiscount"
    );
    assert_eq!(named[0].changes, vec![NameChange::Shortened]);
    assert_readable(id, &named[0].name, 64);
    let at_32 = shorten(id, 32);
    assert_eq!(at_32, "DeleteCustomersIdDiscount");
    assert_readable(id, &at_32, 32);
}

#[test]
fn kubernetes_watch_id_is_shortened_readably() {
    let id = "watchAdmissionregistrationV1alpha1ValidatingAdmissionPolicyBindingList";
    let path =
        "/apis/admissionregistration.k8s.io/v1alpha1/watch/validatingadmissionpolicybindings";
    let named = assign(&[op(id, "GET", path)], "", 64);
    // Middle words go first, so "Binding", which tells it from the sibling
    // `…ValidatingAdmissionPolicyList`, survives.
    assert_eq!(
        named[0].name,
        "watchAdmissionregistrationV1alpha1ValidatingPolicyBindingList"
    );
    assert_eq!(named[0].changes, vec![NameChange::Shortened]);
    assert_readable(id, &named[0].name, 64);
    let at_32 = shorten(id, 32);
    assert_eq!(at_32, "watchAdmissionregistrationList");
    assert_readable(id, &at_32, 32);
}

/// When a shortened name equals another operation's exact operationId, the exact one
/// keeps its name and the shortened one gets the hash of its own method and path.
#[test]
fn kubernetes_shortened_id_colliding_with_real_sibling_gets_the_hash() {
    let binding_path =
        "/apis/admissionregistration.k8s.io/v1alpha1/watch/validatingadmissionpolicybindings";
    let requests = [
        op(
            "watchAdmissionregistrationV1alpha1ValidatingAdmissionPolicyBindingList",
            "GET",
            binding_path,
        ),
        op(
            "watchAdmissionregistrationV1alpha1ValidatingPolicyBindingList",
            "GET",
            "/apis/admissionregistration.k8s.io/v1alpha1/watch/other",
        ),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(
        named[1],
        Named {
            name: "watchAdmissionregistrationV1alpha1ValidatingPolicyBindingList".into(),
            changes: vec![],
        }
    );
    assert_eq!(
        named[0].name,
        format!(
            "{}_{}",
            shorten(
                "watchAdmissionregistrationV1alpha1ValidatingAdmissionPolicyBindingList",
                57
            ),
            short_hash(&format!("GET {binding_path}"), 6)
        )
    );
    assert!(named[0].name.starts_with("watchAdmissionregistration"));
    assert!(named[0].name.len() <= 64);
    assert_eq!(
        named[0].changes,
        vec![NameChange::Shortened, NameChange::Deduplicated]
    );
    assert_all_valid_and_unique(&named, 64);
}

#[test]
fn box_fragment_ids_are_sanitized_and_stay_distinct() {
    let requests = [
        op(
            "put_files_id#add_shared_link",
            "PUT",
            "/files/{file_id}#add_shared_link",
        ),
        op(
            "get_files_id#get_shared_link",
            "GET",
            "/files/{file_id}#get_shared_link",
        ),
        op(
            "put_files_id#remove_shared_link",
            "PUT",
            "/files/{file_id}#remove_shared_link",
        ),
        op(
            "put_files_id#update_shared_link",
            "PUT",
            "/files/{file_id}#update_shared_link",
        ),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(
        names(&named),
        [
            "put_files_id_add_shared_link",
            "get_files_id_get_shared_link",
            "put_files_id_remove_shared_link",
            "put_files_id_update_shared_link",
        ]
    );
    for n in &named {
        assert_eq!(n.changes, vec![NameChange::Sanitized]);
    }
    assert_all_valid_and_unique(&named, 64);
}

#[test]
fn real_long_ids_shorten_readably_at_several_limits() {
    for id in REAL_LONG_IDS {
        let sanitized = sanitize(id, false);
        for max in [64, 48, 40, 32, 24] {
            let short = shorten(&sanitized, max);
            if sanitized.len() <= max {
                assert_eq!(short, sanitized);
                continue;
            }
            assert_readable(&sanitized, &short, max);
        }
    }
}

#[test]
fn real_long_ids_get_valid_unique_names_even_at_small_limits() {
    let requests: Vec<NameRequest> = REAL_LONG_IDS
        .iter()
        .enumerate()
        .map(|(i, id)| op(id, "GET", &format!("/real/{i}")))
        .collect();
    for max in [16, 20, 24, 32, 48, 64, 128] {
        let named = assign(&requests, "", max);
        assert_all_valid_and_unique(&named, max);
    }
}

#[test]
fn twilio_comparison_parameters_become_distinct_argument_names() {
    let sent_before = argument_name("DateSent<");
    let sent_after = argument_name("DateSent>");
    let sent_on = argument_name("DateSent");
    assert_eq!(sent_before, "DateSent_lt");
    assert_eq!(sent_after, "DateSent_gt");
    assert_eq!(sent_on, "DateSent");
    assert_eq!(argument_name("StartTime>="), "StartTime_gte");
    assert_eq!(argument_name("StartTime<="), "StartTime_lte");

    // Within one tool, all three keep their own names: no qualifier needed.
    let mut arguments = ArgumentNames::default();
    assert_eq!(arguments.claim(&sent_on, "query"), "DateSent");
    assert_eq!(arguments.claim(&sent_before, "query"), "DateSent_lt");
    assert_eq!(arguments.claim(&sent_after, "query"), "DateSent_gt");
}

// ---------------------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------------------

/// A batch exercising every kind of name: exact, sanitized, shortened, from-path,
/// colliding and duplicated.
fn mixed_batch() -> Vec<NameRequest> {
    vec![
        op("listPets", "GET", "/pets"),
        op("createPet", "POST", "/pets"),
        anonymous("GET", "/pets/{petId}"),
        op("pets.list", "GET", "/v2/pets"),
        op("pets/list", "GET", "/v3/pets"),
        op("pets_list", "GET", "/v4/pets"),
        op("duplicate", "GET", "/dup/a"),
        op("duplicate", "GET", "/dup/b"),
        op(
            "packages/get-all-package-versions-for-package-owned-by-authenticated-user",
            "GET",
            "/user/packages/{package_type}/{package_name}/versions",
        ),
        op(
            "DeleteCustomersCustomerSubscriptionsSubscriptionExposedIdDiscount",
            "DELETE",
            "/v1/customers/{customer}/subscriptions/{subscription_exposed_id}/discount",
        ),
        op(
            "put_files_id#add_shared_link",
            "PUT",
            "/files/{file_id}#add",
        ),
        anonymous("DELETE", "/stores/{storeId}/orders/{orderId}"),
    ]
}

#[test]
fn same_input_gives_same_names() {
    let requests = mixed_batch();
    for (prefix, max) in [("", 64), ("pet_", 64), ("", 16), ("p_", 20)] {
        let first = assign(&requests, prefix, max);
        let second = assign(&requests.clone(), prefix, max);
        assert_eq!(first, second);
        assert_all_valid_and_unique(&first, max);
    }
}

#[test]
fn names_do_not_depend_on_request_order() {
    let requests = mixed_batch();
    for (prefix, max) in [("", 64), ("pet_", 64), ("", 16), ("", 24)] {
        let expected = by_identity(&requests, &assign(&requests, prefix, max));

        let mut reversed = requests.clone();
        reversed.reverse();
        assert_eq!(
            by_identity(&reversed, &assign(&reversed, prefix, max)),
            expected
        );

        let mut rng = Rng(0x5eed_1234_abcd_0001);
        for _ in 0..20 {
            let mut shuffled = requests.clone();
            rng.shuffle(&mut shuffled);
            assert_eq!(
                by_identity(&shuffled, &assign(&shuffled, prefix, max)),
                expected,
                "order {:?}",
                shuffled.iter().map(|r| &r.identity).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn results_come_back_in_request_order() {
    let requests = [
        op("zeta", "GET", "/z"),
        op("alpha", "GET", "/a"),
        op("mu", "GET", "/m"),
    ];
    assert_eq!(names(&assign(&requests, "", 64)), ["zeta", "alpha", "mu"]);
}

// ---------------------------------------------------------------------------------------
// Stability
// ---------------------------------------------------------------------------------------

#[test]
fn adding_an_unrelated_operation_renames_nothing() {
    let base = mixed_batch();
    for (prefix, max) in [("", 64), ("pet_", 64), ("", 24)] {
        let before = by_identity(&base, &assign(&base, prefix, max));
        for extra in [
            op("getInventory", "GET", "/store/inventory"),
            op("orders/place-order", "POST", "/store/order"),
            anonymous("GET", "/users/{username}"),
            op(
                "orgs/custom-properties-for-repos-create-or-update-organization-definitions",
                "PATCH",
                "/orgs/{org}/properties/schema",
            ),
        ] {
            let mut extended = base.clone();
            extended.insert(3, extra.clone());
            let after = by_identity(&extended, &assign(&extended, prefix, max));
            for (identity, named) in &before {
                assert_eq!(
                    &after[identity], named,
                    "adding {:?} renamed {identity}",
                    extra.identity
                );
            }
        }
    }
}

/// The one documented exception: a name restmcp altered is renamed when a new operation
/// collides with it. An exact name added later wins it, and the altered one gets the hash
/// of its own method and path.
#[test]
fn new_exact_name_takes_over_a_colliding_altered_name() {
    let base = vec![
        op("pets.list", "GET", "/v2/pets"),
        op("createPet", "POST", "/pets"),
    ];
    let before = assign(&base, "", 64);
    assert_eq!(names(&before), ["pets_list", "createPet"]);
    assert_eq!(before[0].changes, vec![NameChange::Sanitized]);

    let mut extended = base.clone();
    extended.push(op("pets_list", "GET", "/v4/pets"));
    let after = assign(&extended, "", 64);
    assert_eq!(
        after[0].name,
        format!("pets_list_{}", short_hash("GET /v2/pets", 6))
    );
    assert_eq!(
        after[0].changes,
        vec![NameChange::Sanitized, NameChange::Deduplicated]
    );
    assert_eq!(after[1], before[1], "unrelated name must not change");
    assert_eq!(after[2].name, "pets_list");
    assert!(after[2].changes.is_empty());
}

#[test]
fn random_additions_only_rename_colliding_tools() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    for round in 0..40 {
        let (base, extra_pool) = random_requests(&mut rng, 30, round);
        let max = [16, 20, 32, 64][round % 4];
        let prefix = if round % 3 == 0 { "x_" } else { "" };
        let before = assign(&base, prefix, max);
        for extra in extra_pool.iter().take(5) {
            let mut extended = base.clone();
            extended.push(extra.clone());
            let after = assign(&extended, prefix, max);
            assert_all_valid_and_unique(&after, max);
            let extra_candidate = candidate(extra, prefix, max).name;
            for (i, request) in base.iter().enumerate() {
                if after[i] == before[i] {
                    continue;
                }
                let own_candidate = candidate(request, prefix, max).name;
                assert!(
                    extra_candidate == own_candidate || extra_candidate == before[i].name,
                    "adding {:?} ({extra_candidate}) renamed {:?}: {:?} -> {:?}",
                    extra.operation_id,
                    request.operation_id,
                    before[i],
                    after[i]
                );
                assert!(after[i].changes.contains(&NameChange::Deduplicated));
                let exact = before[i].changes.is_empty();
                assert!(
                    !exact || request.operation_id == extra.operation_id,
                    "an exact, unique name was renamed: {:?} -> {:?}",
                    before[i],
                    after[i]
                );
            }
        }
    }
}

/// Random requests drawn from a small vocabulary so that collisions are common: exact
/// names, names needing sanitizing, long names needing shortening, duplicates and
/// operations without an operationId.
fn random_requests(
    rng: &mut Rng,
    count: usize,
    salt: usize,
) -> (Vec<NameRequest>, Vec<NameRequest>) {
    const WORDS: [&str; 14] = [
        "list",
        "get",
        "pets",
        "for",
        "the",
        "organization",
        "repositories",
        "authenticated",
        "user",
        "items",
        "v1",
        "settings",
        "by",
        "owner",
    ];
    const SEPARATORS: [&str; 6] = ["_", "-", "/", ".", "#", " "];
    let mut all = Vec::new();
    for i in 0..count + 5 {
        let method = ["GET", "POST", "PUT", "DELETE"][rng.below(4)];
        let path = format!("/r{salt}/{i}/{}", rng.pick(&WORDS));
        if rng.below(6) == 0 {
            all.push(anonymous(method, &path));
            continue;
        }
        // Short ids half of the time, so that they collide often.
        let word_count = if rng.below(2) == 0 {
            1 + rng.below(2)
        } else {
            1 + rng.below(9)
        };
        let mut id = rng.pick(&WORDS).to_string();
        for _ in 1..word_count {
            let word = rng.pick(&WORDS);
            if rng.below(3) == 0 {
                // camelCase boundary
                let mut chars = word.chars();
                let first = chars.next().expect("word").to_ascii_uppercase();
                id.push(first);
                id.push_str(chars.as_str());
            } else {
                let separator = if rng.below(4) == 0 {
                    rng.pick(&SEPARATORS)
                } else {
                    rng.pick(&SEPARATORS[..2])
                };
                id.push_str(separator);
                id.push_str(word);
            }
        }
        all.push(op(&id, method, &path));
    }
    let extra = all.split_off(count);
    (all, extra)
}

// ---------------------------------------------------------------------------------------
// Collisions
// ---------------------------------------------------------------------------------------

#[test]
fn ids_sanitizing_to_the_same_name_both_get_distinct_suffixes() {
    let requests = [
        op("pets.list", "GET", "/v2/pets"),
        op("pets/list", "GET", "/v3/pets"),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(
        named[0].name,
        format!("pets_list_{}", short_hash("GET /v2/pets", 6))
    );
    assert_eq!(
        named[1].name,
        format!("pets_list_{}", short_hash("GET /v3/pets", 6))
    );
    for n in &named {
        assert_eq!(
            n.changes,
            vec![NameChange::Sanitized, NameChange::Deduplicated]
        );
    }
    assert_all_valid_and_unique(&named, 64);
}

#[test]
fn exact_name_keeps_its_name_and_altered_one_gets_the_suffix() {
    // Both orders, to show the winner is chosen by spelling, not position.
    let exact = op("pets_list", "GET", "/v4/pets");
    let altered = op("pets#list", "GET", "/v2/pets");
    for requests in [
        vec![exact.clone(), altered.clone()],
        vec![altered.clone(), exact.clone()],
    ] {
        let named = by_identity(&requests, &assign(&requests, "", 64));
        assert_eq!(
            named["GET /v4/pets"],
            Named {
                name: "pets_list".into(),
                changes: vec![],
            }
        );
        assert_eq!(
            named["GET /v2/pets"],
            Named {
                name: format!("pets_list_{}", short_hash("GET /v2/pets", 6)),
                changes: vec![NameChange::Sanitized, NameChange::Deduplicated],
            }
        );
    }
}

#[test]
fn exact_name_beats_a_name_made_from_the_path() {
    let requests = [
        anonymous("GET", "/pets"),
        op("get_pets", "GET", "/animals/pets"),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(
        named[0],
        Named {
            name: format!("get_pets_{}", short_hash("GET /pets", 6)),
            changes: vec![NameChange::FromPath, NameChange::Deduplicated],
        }
    );
    assert_eq!(
        named[1],
        Named {
            name: "get_pets".into(),
            changes: vec![],
        }
    );
}

#[test]
fn exact_name_beats_a_shortened_name() {
    let long = "listAllTheThingsForTheOrganization";
    let requests = [
        op(long, "GET", "/orgs/{org}/things"),
        op("listAllThingsOrganization", "GET", "/things"),
    ];
    // 25 characters: the long one drops its filler words to exactly the other's name.
    let named = assign(&requests, "", 25);
    assert_eq!(named[1].name, "listAllThingsOrganization");
    assert!(named[1].changes.is_empty());
    assert!(
        named[0]
            .name
            .ends_with(&format!("_{}", short_hash("GET /orgs/{org}/things", 6))),
        "{:?}",
        named[0]
    );
    assert_eq!(
        named[0].changes,
        vec![NameChange::Shortened, NameChange::Deduplicated]
    );
    assert_all_valid_and_unique(&named, 25);
}

#[test]
fn duplicate_operation_ids_both_get_suffixes() {
    // Invalid per OpenAPI, but seen in the wild.
    let requests = [
        op("listPets", "GET", "/pets"),
        op("listPets", "GET", "/v2/pets"),
        op("createPet", "POST", "/pets"),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(
        named[0],
        Named {
            name: format!("listPets_{}", short_hash("GET /pets", 6)),
            changes: vec![NameChange::Deduplicated],
        }
    );
    assert_eq!(
        named[1],
        Named {
            name: format!("listPets_{}", short_hash("GET /v2/pets", 6)),
            changes: vec![NameChange::Deduplicated],
        }
    );
    assert_eq!(named[2].name, "createPet");
    assert_ne!(named[0].name, named[1].name);
}

#[test]
fn duplicate_exact_ids_with_an_altered_twin_all_get_suffixes() {
    let requests = [
        op("listPets", "GET", "/a"),
        op("listPets", "GET", "/b"),
        op("listPets!", "GET", "/c"),
    ];
    let named = assign(&requests, "", 64);
    for (n, identity) in named.iter().zip(["GET /a", "GET /b", "GET /c"]) {
        assert_eq!(n.name, format!("listPets_{}", short_hash(identity, 6)));
        assert!(n.changes.contains(&NameChange::Deduplicated));
    }
    assert_all_valid_and_unique(&named, 64);
}

#[test]
fn deduplicated_name_never_takes_an_exact_name() {
    // The suffixed name the altered operation would get is itself an exact operationId.
    let stolen = format!("pets_{}", short_hash("GET /x", 6));
    let requests = [
        op("pets!", "GET", "/x"),
        op("pets", "GET", "/y"),
        op(&stolen, "GET", "/z"),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(named[1].name, "pets");
    assert!(named[1].changes.is_empty());
    assert_eq!(named[2].name, stolen);
    assert!(named[2].changes.is_empty());
    assert_ne!(named[0].name, "pets");
    assert_ne!(named[0].name, stolen);
    assert!(named[0].changes.contains(&NameChange::Deduplicated));
    assert_all_valid_and_unique(&named, 64);
}

#[test]
fn suffix_is_derived_from_method_and_path() {
    let named = assign(
        &[op("a.b", "GET", "/one"), op("a/b", "GET", "/two")],
        "",
        64,
    );
    // Changing the operationId spelling does not change the suffix; the identity does.
    let respelled = assign(
        &[op("a#b", "GET", "/one"), op("a b", "GET", "/two")],
        "",
        64,
    );
    assert_eq!(named, respelled);
    let moved = assign(
        &[op("a.b", "GET", "/one"), op("a/b", "POST", "/two")],
        "",
        64,
    );
    assert_eq!(moved[0], named[0]);
    assert_ne!(moved[1], named[1]);
    assert_eq!(moved[1].name, format!("a_b_{}", short_hash("POST /two", 6)));
}

#[test]
fn many_colliding_names_stay_unique_and_valid_at_small_limits() {
    let mut requests = Vec::new();
    for i in 0..60 {
        // Exact duplicates.
        requests.push(op("listPets", "GET", &format!("/dup/{i}")));
        // Sanitizing collisions.
        requests.push(op("pets/list", "GET", &format!("/san/{i}")));
        // Long names that shorten to the same thing.
        requests.push(op(
            &format!("organization-{i}-repositories-for-the-authenticated-user"),
            "GET",
            &format!("/long/{i}"),
        ));
        // Names from paths.
        requests.push(anonymous("GET", &format!("/pets/{i}")));
        // One very long word.
        requests.push(op(
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
            "GET",
            &format!("/word/{i}"),
        ));
    }
    for max in [16, 17, 20, 24, 32, 64] {
        for prefix in ["", "ab_"] {
            let named = assign(&requests, prefix, max);
            assert_all_valid_and_unique(&named, max);
        }
    }
}

#[test]
fn random_batches_yield_valid_unique_deterministic_names() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for round in 0..60 {
        let (requests, _) = random_requests(&mut rng, 60, round);
        for (prefix, max) in [("", 16), ("", 20), ("x_", 24), ("", 64), ("api-", 64)] {
            let named = assign(&requests, prefix, max);
            assert_all_valid_and_unique(&named, max);

            let mut shuffled = requests.clone();
            rng.shuffle(&mut shuffled);
            assert_eq!(
                by_identity(&shuffled, &assign(&shuffled, prefix, max)),
                by_identity(&requests, &named)
            );

            let mut counts: HashMap<&str, usize> = HashMap::new();
            for r in &requests {
                if let Some(id) = &r.operation_id {
                    *counts.entry(id.as_str()).or_default() += 1;
                }
            }
            for (r, n) in requests.iter().zip(&named) {
                // A valid operationId that fits and is not duplicated is never changed.
                if let Some(id) = &r.operation_id
                    && counts[id.as_str()] == 1
                    && is_valid_tool_name(&format!("{prefix}{id}"), max)
                {
                    assert_eq!(n.name, format!("{prefix}{id}"), "{r:?}");
                    assert!(n.changes.is_empty(), "{r:?} {n:?}");
                }
                assert_eq!(
                    n.changes.contains(&NameChange::FromPath),
                    r.operation_id.is_none(),
                    "{r:?} {n:?}"
                );
                // A suffix is always the operation's own hash.
                if n.changes.contains(&NameChange::Deduplicated) {
                    assert!(
                        [6, 8, 10, 12].iter().any(|&len| n
                            .name
                            .ends_with(&format!("_{}", short_hash(&r.identity, len)))),
                        "{r:?} {n:?}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Missing operationId
// ---------------------------------------------------------------------------------------

#[test]
fn missing_operation_id_is_named_from_method_and_path() {
    let named = assign(&[anonymous("GET", "/pets/{petId}")], "", 64);
    assert_eq!(
        named[0],
        Named {
            name: "get_pets_petId".into(),
            changes: vec![NameChange::FromPath],
        }
    );
}

#[test]
fn path_names_are_sanitized_without_reporting_sanitized() {
    let requests = [
        anonymous("DELETE", "/v1/users.json"),
        anonymous("POST", "/"),
        anonymous("PATCH", "/stores/{storeId}/orders/{orderId}"),
        anonymous("GET", "/files/{file_id}:copy"),
    ];
    let named = assign(&requests, "", 64);
    assert_eq!(
        names(&named),
        [
            "delete_v1_users_json",
            "post",
            "patch_stores_storeId_orders_orderId",
            "get_files_file_id_copy",
        ]
    );
    for n in &named {
        assert_eq!(n.changes, vec![NameChange::FromPath], "{n:?}");
    }
}

#[test]
fn long_path_name_is_shortened() {
    let path = "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/logs";
    let named = assign(&[anonymous("GET", path)], "", 32);
    assert_eq!(
        named[0].changes,
        vec![NameChange::FromPath, NameChange::Shortened]
    );
    assert!(is_valid_tool_name(&named[0].name, 32), "{:?}", named[0]);
    assert_readable(
        "get_repos_owner_repo_actions_runs_run_id_attempts_attempt_number_logs",
        &named[0].name,
        32,
    );
}

#[test]
fn unusable_operation_id_falls_back_to_the_path() {
    for unusable in ["!!!", "日本語", "#", "__"] {
        let named = assign(&[op(unusable, "GET", "/pets/{petId}")], "", 64);
        assert_eq!(named[0].name, "get_pets_petId", "{unusable:?}");
        assert!(
            !named[0].changes.is_empty(),
            "{unusable:?}: must be reported"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Prefix
// ---------------------------------------------------------------------------------------

#[test]
fn prefix_is_prepended_without_counting_as_a_change() {
    let named = assign(
        &[
            op("listPets", "GET", "/pets"),
            anonymous("GET", "/pets/{id}"),
        ],
        "pet_",
        64,
    );
    assert_eq!(
        named[0],
        Named {
            name: "pet_listPets".into(),
            changes: vec![],
        }
    );
    assert_eq!(
        named[1],
        Named {
            name: "pet_get_pets_id".into(),
            changes: vec![NameChange::FromPath],
        }
    );
}

#[test]
fn prefixed_name_stays_within_the_limit() {
    let id = "packages/get-all-package-versions-for-package-owned-by-authenticated-user";
    for (prefix, max) in [("gh_", 64), ("github_", 64), ("gh-", 32), ("gh_", 16)] {
        let named = assign(&[op(id, "GET", "/user/packages")], prefix, max);
        let name = &named[0].name;
        assert!(is_valid_tool_name(name, max), "{name:?} (max {max})");
        assert!(name.starts_with(prefix), "{name:?} lost {prefix:?}");
        assert_eq!(
            name,
            &format!(
                "{prefix}{}",
                shorten(&sanitize(id, false), max - prefix.len())
            )
        );
        assert_eq!(
            named[0].changes,
            vec![NameChange::Sanitized, NameChange::Shortened]
        );
    }
}

#[test]
fn name_exactly_at_the_limit_with_prefix_is_kept() {
    let id = "a".repeat(60);
    let named = assign(&[op(&id, "GET", "/a")], "pet_", 64);
    assert_eq!(named[0].name, format!("pet_{id}"));
    assert!(named[0].changes.is_empty());

    let one_more = "a".repeat(61);
    let named = assign(&[op(&one_more, "GET", "/a")], "pet_", 64);
    assert_eq!(named[0].name.len(), 64);
    assert!(named[0].name.starts_with("pet_"));
    assert_eq!(named[0].changes, vec![NameChange::Shortened]);
}

#[test]
fn prefixed_exact_name_wins_a_collision_and_suffixed_one_keeps_prefix() {
    let requests = [op("pets_list", "GET", "/a"), op("pets.list", "GET", "/b")];
    let named = assign(&requests, "pet_", 64);
    assert_eq!(named[0].name, "pet_pets_list");
    assert!(named[0].changes.is_empty());
    assert_eq!(
        named[1].name,
        format!("pet_pets_list_{}", short_hash("GET /b", 6))
    );
}

/// The prefix namespaces one API's tools against another's, so it must survive
/// deduplication. `assign` shortens the whole prefixed name (`named[i].name`) to make room
/// for the hash, so the prefix's words and separator can be dropped like any other word:
/// today the first case yields `gh-things_tfi6eu` and the second `my_tfi6eu`.
#[test]
fn prefix_survives_deduplication() {
    // Duplicate operationIds that also need shortening, at the smallest allowed limit.
    let requests = [
        op("get-all-things", "GET", "/a"),
        op("get-all-things", "GET", "/b"),
    ];
    let named = assign(&requests, "gh_", 16);
    assert_all_valid_and_unique(&named, 16);
    for n in &named {
        assert!(n.name.starts_with("gh_"), "{n:?} lost the prefix \"gh_\"");
    }

    // Same at the default limit, with a long single-word operationId.
    let requests = [
        op(&"x".repeat(70), "GET", "/a"),
        op(&"x".repeat(71), "GET", "/b"),
    ];
    let named = assign(&requests, "my_api_", 64);
    assert_all_valid_and_unique(&named, 64);
    for n in &named {
        assert!(n.name.starts_with("my_api_"), "{n:?} lost the prefix");
    }
}

// ---------------------------------------------------------------------------------------
// Length limit and separators
// ---------------------------------------------------------------------------------------

#[test]
fn exact_name_at_the_limit_is_kept_and_one_over_is_shortened() {
    let at_limit = format!("get_{}", "x".repeat(60));
    let named = assign(&[op(&at_limit, "GET", "/a")], "", 64);
    assert_eq!(named[0].name, at_limit);
    assert!(named[0].changes.is_empty());

    let over = format!("get_items_{}", "x".repeat(55));
    assert_eq!(over.len(), 65);
    let named = assign(&[op(&over, "GET", "/a")], "", 64);
    assert_eq!(named[0].name, format!("get_{}", "x".repeat(55)));
    assert_eq!(named[0].changes, vec![NameChange::Shortened]);
}

#[test]
fn names_never_start_or_end_with_a_separator() {
    let requests = [
        op("-list-", "GET", "/a"),
        op("_list__pets_", "GET", "/b"),
        op("list pets ", "GET", "/c"),
        op("list-pets-for-", "GET", "/d"),
        op("pets/", "GET", "/e"),
    ];
    for max in [16, 64] {
        let named = assign(&requests, "", max);
        assert_all_valid_and_unique(&named, max);
        for n in &named {
            assert!(!n.name.starts_with(['_', '-']), "{n:?}");
        }
    }
    // The two spellings of list_pets collide and are both altered.
    assert_eq!(
        names(&assign(&requests, "", 64)),
        [
            "list".to_string(),
            format!("list_pets_{}", short_hash("GET /b", 6)),
            format!("list_pets_{}", short_hash("GET /c", 6)),
            "list-pets-for".to_string(),
            "pets".to_string(),
        ]
    );
}

// ---------------------------------------------------------------------------------------
// sanitize
// ---------------------------------------------------------------------------------------

#[test]
fn sanitize_replaces_collapses_and_trims() {
    assert_eq!(sanitize("pets/list", false), "pets_list");
    assert_eq!(sanitize("a  //  b", false), "a_b");
    assert_eq!(sanitize("héllo wörld", false), "h_llo_w_rld");
    assert_eq!(sanitize("__a-b__", false), "a-b");
    assert_eq!(sanitize("--a--", false), "a");
    assert_eq!(sanitize("a.b", false), "a_b");
    assert_eq!(sanitize("a.b", true), "a.b");
    assert_eq!(sanitize(".a.", true), "a");
    assert_eq!(sanitize("!!!", false), "");
    assert_eq!(
        sanitize("Already_Valid-name9", false),
        "Already_Valid-name9"
    );
}

// ---------------------------------------------------------------------------------------
// argument_name
// ---------------------------------------------------------------------------------------

#[test]
fn argument_name_strips_array_brackets() {
    assert_eq!(argument_name("expand[]"), "expand");
    assert_eq!(argument_name("filter[status]"), "filter_status");
    assert_eq!(argument_name("metadata[key][]"), "metadata_key");
}

#[test]
fn argument_name_keeps_dots_and_dashes() {
    assert_eq!(argument_name("user.name"), "user.name");
    assert_eq!(argument_name("X-Request-Id"), "X-Request-Id");
    assert_eq!(argument_name("page_size"), "page_size");
}

#[test]
fn argument_name_is_never_empty() {
    for garbage in ["", "[]", "!!!", "日本", "   ", "...", "_"] {
        let name = argument_name(garbage);
        assert_eq!(name, "arg", "{garbage:?}");
    }
    assert_eq!(argument_name("a b"), "a_b");
}

#[test]
fn argument_name_is_capped_at_64() {
    let exactly = "p".repeat(64);
    assert_eq!(argument_name(&exactly), exactly);

    let one_word = "p".repeat(100);
    assert_eq!(argument_name(&one_word), "p".repeat(64));

    let many_words = (0..20)
        .map(|i| format!("part{i}"))
        .collect::<Vec<_>>()
        .join(".");
    let name = argument_name(&many_words);
    assert!(name.len() <= 64, "{name:?}");
    assert!(name.starts_with("part0."), "{name:?}");
    assert!(name.ends_with(".part19"), "{name:?}");
    assert!(!name.ends_with(['.', '_', '-']));
}

#[test]
fn argument_names_match_the_tool_api_pattern() {
    let inputs = [
        "expand[]",
        "DateSent<",
        "DateSent>",
        "X-Api-Key",
        "user.name",
        "日本",
        "a&b=c",
        &"word-".repeat(30),
    ];
    for input in inputs {
        let name = argument_name(input);
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')),
            "{input:?} -> {name:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// ArgumentNames
// ---------------------------------------------------------------------------------------

#[test]
fn claim_qualifies_then_numbers() {
    let mut arguments = ArgumentNames::default();
    assert_eq!(arguments.claim("id", "body"), "id");
    assert_eq!(arguments.claim("id", "query"), "id__query");
    assert_eq!(arguments.claim("id", "query"), "id__query_2");
    assert_eq!(arguments.claim("id", "query"), "id__query_3");
    assert_eq!(arguments.claim("id", "header"), "id__header");
    assert_eq!(arguments.claim("name", "query"), "name");
}

#[test]
fn claim_skips_names_already_taken_literally() {
    let mut arguments = ArgumentNames::default();
    assert_eq!(arguments.claim("id__query", "body"), "id__query");
    assert_eq!(arguments.claim("id", "path"), "id");
    assert_eq!(arguments.claim("id", "query"), "id__query_2");
}

#[test]
fn claim_keeps_long_names_within_64() {
    let long = "a".repeat(64);
    let mut arguments = ArgumentNames::default();
    let mut seen = HashSet::new();
    for qualifier in ["body", "query", "query", "header", "cookie", "path"] {
        let name = arguments.claim(&long, qualifier);
        assert!(name.len() <= 64, "{name:?}");
        assert!(seen.insert(name.clone()), "duplicate {name:?}");
    }
    let second = {
        let mut a = ArgumentNames::default();
        a.claim(&long, "body");
        a.claim(&long, "query")
    };
    assert!(second.ends_with("__query"), "{second:?}");
}

// ---------------------------------------------------------------------------------------
// short_hash and is_valid_tool_name
// ---------------------------------------------------------------------------------------

#[test]
fn short_hash_is_pinned() {
    // FNV-1a 64, base-32 little-end first: must never change between releases, or every
    // deduplicated tool name changes with it.
    assert_eq!(short_hash("GET /pets/{petId}", 6), "tjg6ou");
    assert_eq!(short_hash("GET /pets/{petId}", 12), "tjg6ouicdme3");
    assert_eq!(short_hash("", 12), "5p8422issksn");
    assert_eq!(short_hash("a", 6), "c4r303");
}

#[test]
fn short_hash_has_the_requested_length() {
    for len in 0..=12 {
        let hash = short_hash("POST /v1/customers", len);
        assert_eq!(hash.len(), len);
        assert!(
            hash.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b)),
            "{hash:?}"
        );
        assert!(short_hash("POST /v1/customers", 12).starts_with(&hash));
    }
}

#[test]
fn short_hash_distinguishes_identities() {
    let identities = [
        "GET /pets",
        "POST /pets",
        "GET /pets/",
        "GET /Pets",
        "GET /pets/{id}",
        "GET /pets/{petId}",
    ];
    let hashes: HashSet<String> = identities.iter().map(|i| short_hash(i, 6)).collect();
    assert_eq!(hashes.len(), identities.len());
}

#[test]
fn is_valid_tool_name_rules() {
    assert!(is_valid_tool_name("list_pets-v2", 64));
    assert!(is_valid_tool_name(&"a".repeat(64), 64));
    assert!(!is_valid_tool_name(&"a".repeat(65), 64));
    assert!(!is_valid_tool_name("", 64));
    assert!(!is_valid_tool_name("pets.list", 64));
    assert!(!is_valid_tool_name("pets/list", 64));
    assert!(!is_valid_tool_name("pets list", 64));
    assert!(!is_valid_tool_name("pétś", 64));
}

// ---------------------------------------------------------------------------------------
// shorten
// ---------------------------------------------------------------------------------------

#[test]
fn shorten_leaves_fitting_names_alone() {
    assert_eq!(
        shorten("list-repositories-for-the-user", 30),
        "list-repositories-for-the-user"
    );
    assert_eq!(shorten("x", 1), "x");
}

#[test]
fn shorten_drops_filler_words_first() {
    // Dropping "the" and "for" is enough: "repositories" is not abbreviated.
    assert_eq!(
        shorten("list-repositories-for-the-user", 24),
        "list-repositories-user"
    );
    // camelCase fillers too, case-insensitively.
    assert_eq!(shorten("ListAccountsForTheUser", 18), "ListAccountsUser");
}

#[test]
fn shorten_keeps_a_final_filler_word() {
    // "in" is the last word (the object), so it is not dropped as filler.
    let short = shorten("sign-the-user-in", 12);
    assert_eq!(short, "sign-user-in");
}

#[test]
fn shorten_abbreviates_after_fillers_and_keeps_case() {
    assert_eq!(
        shorten("list-repositories-for-the-user", 20),
        "list-repos-user"
    );
    // Abbreviations apply left to right only until the name fits.
    assert_eq!(
        shorten("getOrganizationRepositories", 20),
        "getOrgRepositories"
    );
    assert_eq!(shorten("getOrganizationRepositories", 12), "getOrgRepos");
    assert_eq!(shorten("ORGANIZATION_settings", 16), "Org_settings");
}

#[test]
fn shorten_drops_whole_middle_words_keeping_first_and_last() {
    let input = "alpha_bravo_charlie_delta_echo";
    let short = shorten(input, 20);
    assert_eq!(short, "alpha_bravo_echo");
    assert_readable(input, &short, 20);
    let shorter = shorten(input, 10);
    assert_eq!(shorter, "alpha_echo");
}

#[test]
fn shorten_cuts_only_a_single_overlong_word() {
    assert_eq!(shorten("abcdefghijklmnopqrstuvwxyz", 10), "abcdefghij");
    // Two words that cannot both fit: the first is kept whole rather than cutting either.
    assert_eq!(shorten("abcdefgh_ijklmnop", 10), "abcdefgh");
    // Only when the first word alone is too long is it cut.
    assert_eq!(shorten("abcdefghijkl_mn", 5), "abcde");
}

#[test]
fn shorten_never_leaves_a_trailing_separator() {
    for (input, max) in [
        ("get-a-b-c-d", 5),
        ("alpha_b", 6),
        ("list__pets", 5),
        ("a-b-c-d-e-f-g-h", 3),
    ] {
        let short = shorten(input, max);
        assert!(short.len() <= max, "{input:?} -> {short:?}");
        assert!(!short.is_empty(), "{input:?}");
        assert!(!short.ends_with(['_', '-', '.']), "{input:?} -> {short:?}");
    }
}

#[test]
fn shorten_random_names_keep_whole_words() {
    // Lower-case words of at least two letters so that camelCase boundaries are
    // unambiguous.
    const WORDS: [&str; 20] = [
        "get",
        "list",
        "for",
        "the",
        "by",
        "of",
        "an",
        "organization",
        "repositories",
        "authenticated",
        "user",
        "pets",
        "v1",
        "settings",
        "item",
        "configuration",
        "definitions",
        "id",
        "verylongwordwithoutanybreaks",
        "go",
    ];
    let mut rng = Rng(0xfeed_beef_0000_0042);
    for _ in 0..2000 {
        let count = 1 + rng.below(10);
        let mut input = String::new();
        for i in 0..count {
            let word = rng.pick(&WORDS);
            if i > 0 {
                match rng.below(4) {
                    0 => {
                        let mut chars = word.chars();
                        input.push(chars.next().expect("word").to_ascii_uppercase());
                        input.push_str(chars.as_str());
                        continue;
                    }
                    1 => input.push('-'),
                    2 => input.push('.'),
                    _ => input.push('_'),
                }
            }
            input.push_str(word);
        }
        let input_words = simple_words(&input);
        for max in 1..=input.len() + 1 {
            let output = shorten(&input, max);
            if input.len() <= max {
                assert_eq!(output, input);
                continue;
            }
            assert!(output.len() <= max, "{input:?} @{max} -> {output:?}");
            assert!(!output.is_empty(), "{input:?} @{max}");
            assert!(
                !output.starts_with(['_', '-', '.']) && !output.ends_with(['_', '-', '.']),
                "{input:?} @{max} -> {output:?}"
            );
            let output_words = simple_words(&output);
            let whole = output_words
                .iter()
                .all(|w| input_words.iter().any(|i| same_or_abbreviated(i, w)));
            if whole {
                assert_whole_words_in_order(&input, &output, &input_words, &output_words);
                assert!(
                    same_or_abbreviated(&input_words[0], &output_words[0]),
                    "{input:?} @{max} -> {output:?}: first word lost"
                );
                if output_words.len() >= 2 {
                    assert!(
                        same_or_abbreviated(
                            input_words.last().expect("words"),
                            output_words.last().expect("words")
                        ),
                        "{input:?} @{max} -> {output:?}: last word lost"
                    );
                }
            } else {
                // A word was cut: only allowed for a single word longer than the limit,
                // which can only be the first.
                assert_eq!(output_words.len(), 1, "{input:?} @{max} -> {output:?}");
                assert_eq!(output.len(), max, "{input:?} @{max} -> {output:?}");
                let first = &input_words[0];
                let abbreviated = ABBREVIATIONS
                    .iter()
                    .find(|(long, _)| *long == first.as_str())
                    .map_or(first.as_str(), |(_, short)| short);
                assert!(
                    abbreviated.len() > max && abbreviated.starts_with(&output),
                    "{input:?} @{max} -> {output:?}: a word was cut"
                );
            }
        }
    }
}

#[test]
fn names_within_a_client_budget_are_short_distinct_and_stable() {
    let names = [
        "actions_list-self-hosted-runners-for-organization",
        "actions_list-self-hosted-runners-for-repository",
        "actions_list-self-hosted-runner-groups-for-organization",
        "repos_get",
        "apps_list-installation-repos-for-authenticated-user",
        "apps_list-installation-repos-for-authenticated-user-2",
    ];
    for max in [16, 24, 32, 40] {
        let short = within_budget(&names, max);
        let distinct: std::collections::HashSet<&String> = short.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{short:?}");
        for name in &short {
            assert!(is_valid_tool_name(name, max), "{name} at {max}");
        }
        assert_eq!(short[3], "repos_get", "names that fit are kept");
        assert_eq!(within_budget(&names, max), short, "stable");
    }
}
