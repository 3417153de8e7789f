//! `restmcp explain TOOL`: one tool as clients see it, and where each piece came from
//! ([`crate::catalog::explain`] writes it; this prints it, or the closest name when there is
//! no such tool).

use crate::catalog::explain;
use crate::config::Config;
use crate::load::Loaded;

/// Prints the tool called `tool` to `out`: [`explain::render`]ed, or with `json`
/// [`explain::json`]. Fails naming the closest tool name when there is no tool by that name.
pub fn print(
    loaded: &Loaded,
    tool: &str,
    json: bool,
    config: &Config,
    out: &mut impl std::io::Write,
) -> anyhow::Result<()> {
    let Some(found) = loaded.catalog.get(tool) else {
        anyhow::bail!(
            "no tool named \"{tool}\"{} (`restmcp tools` lists them)",
            loaded.catalog.closest_hint(tool)
        );
    };
    if json {
        serde_json::to_writer_pretty(&mut *out, &explain::json(&loaded.catalog, found))?;
        writeln!(out)?;
    } else {
        let api = config.apis.get(&found.route.api);
        let scopes = loaded.catalog.required_scopes(found);
        let listing = loaded.catalog.listing(&found.route.api);
        write!(out, "{}", explain::render(found, api, &scopes, listing))?;
    }
    Ok(())
}
