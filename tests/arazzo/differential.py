"""The Arazzo differential suite: every run of the corpus through Redocly Respect and through
restmcp's workflow tools, against the same scripted upstream, judged by what reached it.

Started by tests/arazzo/run.sh, which installs what it needs and says how to run it. For each
case folder of tests/arazzo/corpus/ (its case.yaml says what is in it, see corpus/README.md),
and each of its runs (a workflow, its inputs, a script for the upstream and what to expect):

  Respect   the upstream is loaded with the run's script (which resets its log), then
            `redocly respect DOC -w WORKFLOW -i INPUTS --server {SOURCE: URL} -J LOG
            --severity {SCHEMA_CHECK, STATUS_CODE_CHECK, CONTENT_TYPE_CHECK: off}` (and
            `--max-steps N` when the case's config sets max_steps); the upstream's log is the
            requests, the JSON log the success and the failed step.
  restmcp   one `restmcp serve --config CASE/config.toml` per case ([apis.X] per source, at
            the upstream; [workflows.CASE] with the case's extra keys); the upstream is
            loaded with the same script again, then the official MCP Python SDK calls the
            workflow's tool over Streamable HTTP; the upstream's log is the requests, the
            result the success, the outputs (structuredContent) and the failure's text.

Each run is judged by facets, each of which holds or differs:
  respect.ran          Respect loaded the document and ran the workflow (its lint did not refuse it)
  respect.success      its workflow status agrees with expect.success
  respect.requests     the upstream's requests agree with expect.requests
  respect.failed_step  the step its log shows failing is expect.failed_step
  respect.timing       the gaps between its requests are at least expect.min_gaps
  restmcp.ran          the tool is listed and the call returned a result
  restmcp.success      isError agrees with expect.success
  restmcp.requests     the upstream's requests agree with expect.requests
  restmcp.outputs      structuredContent equals expect.outputs (on success)
  restmcp.failed_step  the failure's text names expect.failed_step
  restmcp.timing       as respect.timing
  diff.requests        both sent the same requests (method, path, sorted query, content type,
                       canonical body), in the same order
  diff.success         both succeeded, or both failed
A run passes when the facets that differ are exactly those tests/arazzo/known.yaml lists for
it: an unlisted difference fails it, and so does a listed one that no longer occurs. Only
facets that were evaluated are judged: a side's facets other than `ran` when it ran, the
diff.* facets when both did, nothing of a side left out with `--side`.

Output: one line per run (`pass`, `FAIL`), with what differed; then `arazzo: P passed, F
failed`. The work directory (target/arazzo/work) keeps each case's config, Respect's JSON
logs and stdout, each side's requests, and the upstream's log.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import yaml
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: processes
from harness import CHILDREN, Child, child_env, free_port, kill_all  # noqa: E402

HERE = Path(__file__).resolve().parent
SEVERITY = json.dumps({"SCHEMA_CHECK": "off", "STATUS_CODE_CHECK": "off", "CONTENT_TYPE_CHECK": "off"})
RESPECT_TIMEOUT = 60.0  # seconds, one Respect run (a retry case waits a few seconds)
CALL_TIMEOUT = 60.0
GAP_SLACK = 0.05  # seconds a measured gap may fall short of expect.min_gaps

FACETS = [
    "respect.ran", "respect.success", "respect.requests", "respect.failed_step", "respect.timing",
    "restmcp.ran", "restmcp.success", "restmcp.requests", "restmcp.outputs", "restmcp.failed_step",
    "restmcp.timing", "diff.requests", "diff.success",
]


# --------------------------------------------------------------------------------------
# Requests: the upstream's log entries, as lines and as canonical tuples


def line_of(entry: dict[str, Any]) -> str:
    query = "&".join(f"{k}={v}" for k, v in entry["query"])
    return f"{entry['method']} {entry['path']}" + (f"?{query}" if query else "")


def canonical(entry: dict[str, Any]) -> str:
    """What diff.requests compares: method, path, sorted query, content type, canonical body."""
    return json.dumps([line_of(entry), entry.get("content_type"), entry.get("body")], sort_keys=True)


def show(entry: dict[str, Any]) -> str:
    out = line_of(entry)
    if entry.get("body") is not None:
        out += f" [{entry.get('content_type')}] {json.dumps(entry['body'], sort_keys=True)}"
    return out


def want_body(want: dict[str, Any]) -> Any:
    if "json" in want:
        return {"json": want["json"]}
    if "form" in want:
        pairs = []
        for k, v in want["form"].items():
            for item in v if isinstance(v, list) else [v]:
                pairs.append([str(k), item if isinstance(item, str) else json.dumps(item)])
        return {"form": sorted(pairs)}
    if "text" in want:
        return {"text": want["text"]}
    return None


def request_problems(seen: list[dict[str, Any]], wanted: list[Any]) -> list[str]:
    """expect.requests against the log: each wanted request is a line `METHOD /path?k=v&...`
    (query pairs sorted, decoded), or {req: LINE, json|form|text: BODY, content_type, headers}."""
    problems = []
    for i in range(max(len(seen), len(wanted))):
        got = seen[i] if i < len(seen) else None
        want = wanted[i] if i < len(wanted) else None
        if got is None:
            problems.append(f"#{i + 1}: missing {want if isinstance(want, str) else want.get('req')}")
            continue
        if want is None:
            problems.append(f"#{i + 1}: unexpected {show(got)}")
            continue
        spec = {"req": want} if isinstance(want, str) else want
        if line_of(got) != spec["req"]:
            problems.append(f"#{i + 1}: {line_of(got)} (expected {spec['req']})")
            continue
        body = want_body(spec)
        if body is not None and got.get("body") != body:
            problems.append(f"#{i + 1} {spec['req']}: body {json.dumps(got.get('body'), sort_keys=True)} (expected {json.dumps(body, sort_keys=True)})")
        if "content_type" in spec and got.get("content_type") != spec["content_type"]:
            problems.append(f"#{i + 1} {spec['req']}: content type {got.get('content_type')} (expected {spec['content_type']})")
        for name, value in (spec.get("headers") or {}).items():
            if got["headers"].get(name.lower()) != value:
                problems.append(f"#{i + 1} {spec['req']}: header {name}: {got['headers'].get(name.lower())!r} (expected {value!r})")
    return problems


def timing_problems(seen: list[dict[str, Any]], gaps: list[float] | None) -> list[str]:
    if not gaps:
        return []
    problems = []
    for i, gap in enumerate(gaps):
        if i + 1 >= len(seen):
            break
        took = seen[i + 1]["t"] - seen[i]["t"]
        if took + GAP_SLACK < gap:
            problems.append(f"{took:.2f} s between requests #{i + 1} and #{i + 2} (expected at least {gap} s)")
    return problems


# --------------------------------------------------------------------------------------
# The corpus


class Case:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.name = folder.name
        try:
            self.data = yaml.safe_load((folder / "case.yaml").read_text())
        except yaml.YAMLError as e:
            raise ValueError(f"{folder / 'case.yaml'}: {e}") from None
        docs = [self.data["document"]] if "document" in self.data else sorted(p.name for p in folder.glob("*.arazzo.yaml"))
        if len(docs) != 1:
            raise ValueError(f"{self.name}: one *.arazzo.yaml expected (or `document:` in case.yaml), found {docs}")
        self.document = folder / docs[0]
        self.sources: dict[str, str] = self.data["sources"]
        self.base_paths: dict[str, str] = self.data.get("base_paths") or {}
        self.config: dict[str, Any] = self.data.get("config") or {}
        self.runs: list[dict[str, Any]] = self.data["runs"]
        names = [run_name(r) for r in self.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: runs of the same workflow need distinct `name`s: {names}")

    def servers(self, upstream: str) -> dict[str, str]:
        return {source: upstream + self.base_paths.get(source, "") for source in self.sources}


def run_name(run: dict[str, Any]) -> str:
    return run.get("name") or run["workflow"]


def tool_name(case: Case, workflow: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(case.config.get("prefix", "")) + workflow)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise ValueError(f"no TOML for {value!r}")


def api_name(source: str) -> str:
    """restmcp's API (and workflow set) names are a-z, 0-9, _ and -."""
    return re.sub(r"[^a-z0-9_-]", "_", source.lower())


def write_config(case: Case, upstream: str, port: int, path: Path) -> None:
    lines = ["# written by tests/arazzo/differential.py", "[server]", f'listen = "127.0.0.1:{port}"', ""]
    for source, spec in case.sources.items():
        lines += [f"[apis.{api_name(source)}]", f"spec = {toml_value(str(case.folder / spec))}",
                  f"base_url = {toml_value(case.servers(upstream)[source])}", ""]
    lines += [f"[workflows.{api_name(case.name)}]", f"file = {toml_value(str(case.document))}",
              f"sources = {toml_value({s: api_name(s) for s in case.sources})}"]
    for key, value in case.config.items():
        lines.append(f"{key} = {toml_value(value)}")
    path.write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------
# The two sides


class Upstream:
    def __init__(self, url: str) -> None:
        self.url = url

    def load(self, script: list[dict[str, Any]]) -> None:
        r = httpx2.post(self.url + "/__arazzo/script", json=script, timeout=10)
        r.raise_for_status()

    def log(self) -> list[dict[str, Any]]:
        r = httpx2.get(self.url + "/__arazzo/log", timeout=10)
        r.raise_for_status()
        return r.json()


def respect_failed_step(node: dict[str, Any]) -> str | None:
    """The deepest step whose status is not success, the last such one."""
    found = None
    for step in node.get("executedSteps") or []:
        if step.get("type") == "workflow":
            inner = respect_failed_step(step)
            if inner is not None:
                found = inner
            elif step.get("status") not in (None, "success"):
                found = step.get("stepId")
        elif step.get("status") not in (None, "success"):
            found = step.get("stepId")
    return found


def run_respect(args: argparse.Namespace, case: Case, run: dict[str, Any], upstream: Upstream, work: Path) -> dict[str, Any]:
    upstream.load(run.get("script") or [])
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", run_name(run))
    log_json = work / f"respect-{slug}.json"
    log_json.unlink(missing_ok=True)
    argv = [args.node, args.respect, "respect", case.document.name, "-w", run["workflow"],
            "--server", json.dumps(case.servers(upstream.url)), "-J", str(log_json), "--severity", SEVERITY]
    if run.get("inputs"):
        argv += ["-i", json.dumps(run["inputs"])]
    if "max_steps" in case.config:
        argv += ["--max-steps", str(case.config["max_steps"])]
    env = child_env({"REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true", "NO_COLOR": "1",
                     "FORCE_COLOR": "0", "CI": "true"})
    try:
        proc = subprocess.run(argv, cwd=case.folder, env=env, capture_output=True, text=True, timeout=RESPECT_TIMEOUT)
        out = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        out = f"timed out after {RESPECT_TIMEOUT} s\n{e.stdout or ''}{e.stderr or ''}"
    (work / f"respect-{slug}.out").write_text(out)
    seen = upstream.log()
    result: dict[str, Any] = {"requests": seen, "ran": False}
    if not log_json.exists():
        lines = [ln for ln in out.splitlines() if ln.strip() and not any(c in ln for c in "║╔╚")]
        result["why"] = " | ".join(ln.strip() for ln in lines if "rule" in ln or "Error" in ln or "error" in ln)[:600] or out[-600:]
        return result
    data = json.loads(log_json.read_text())
    workflows = [w for f in data.get("files", {}).values() for w in f.get("executedWorkflows", [])]
    mine = [w for w in workflows if w.get("workflowId") == run["workflow"]]
    if not mine:
        result["why"] = f"no executed workflow {run['workflow']} in its JSON log"
        return result
    top = mine[-1]
    result.update(ran=True, success=top.get("status") == "success", failed_step=respect_failed_step(top),
                  statuses=[w.get("status") for w in workflows])
    return result


async def run_restmcp(case: Case, run: dict[str, Any], upstream: Upstream, url: str) -> dict[str, Any]:
    upstream.load(run.get("script") or [])
    name = tool_name(case, run["workflow"])
    result: dict[str, Any] = {"ran": False}
    try:
        with anyio.fail_after(CALL_TIMEOUT):
            async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as c:
                tools = {t.name for t in (await c.list_tools()).tools}
                if name not in tools:
                    result["why"] = f"no tool {name!r} listed; restmcp check says: {check_says(case, run['workflow'])}"
                else:
                    r = await c.call_tool(name, run.get("inputs") or {})
                    text = "\n".join(getattr(b, "text", "") for b in r.content or [])
                    result.update(ran=True, success=not r.is_error, outputs=r.structured_content, text=text)
    except Exception as e:  # noqa: BLE001 - a failed call is this run's finding
        result["why"] = harness.describe(e)
    result["requests"] = upstream.log()
    return result


# --------------------------------------------------------------------------------------
# Judging


def judge(run: dict[str, Any], respect: dict[str, Any] | None, restmcp: dict[str, Any] | None) -> tuple[dict[str, list[str]], set[str]]:
    """(facet -> why it differs, the facets evaluated): a side's facets other than `ran` are
    evaluated only when it ran, the diff.* facets only when both did."""
    expect = run.get("expect") or {}
    want_success = expect.get("success", True)
    wanted = expect.get("requests")
    differs: dict[str, list[str]] = {}
    evaluated: set[str] = set()
    for name, side in (("respect", respect), ("restmcp", restmcp)):
        if side is not None:
            evaluated |= {f for f in FACETS if f.startswith(name + ".") and (side["ran"] or f == name + ".ran")}
    if respect is not None and restmcp is not None and respect["ran"] and restmcp["ran"]:
        evaluated |= {f for f in FACETS if f.startswith("diff.")}

    def note(facet: str, problems: list[str]) -> None:
        if problems:
            differs[facet] = problems

    if respect is not None:
        if not respect["ran"]:
            note("respect.ran", [respect.get("why", "did not run")])
        else:
            if respect["success"] != want_success:
                note("respect.success", [f"workflow {'succeeded' if respect['success'] else 'failed'} (expected {'success' if want_success else 'failure'})"])
            if wanted is not None:
                note("respect.requests", request_problems(respect["requests"], wanted))
            if "failed_step" in expect and not respect["success"] and respect["failed_step"] != expect["failed_step"]:
                note("respect.failed_step", [f"failed at {respect['failed_step']!r} (expected {expect['failed_step']!r})"])
            note("respect.timing", timing_problems(respect["requests"], expect.get("min_gaps")))
    if restmcp is not None:
        if not restmcp["ran"]:
            note("restmcp.ran", [restmcp.get("why", "did not run")])
        else:
            if restmcp["success"] != want_success:
                note("restmcp.success", [f"{'success' if restmcp['success'] else 'isError'} (expected {'success' if want_success else 'failure'}): {harness.short(restmcp['text'], 500)}"])
            if wanted is not None:
                note("restmcp.requests", request_problems(restmcp["requests"], wanted))
            if restmcp["success"] and "outputs" in expect and restmcp["outputs"] != expect["outputs"]:
                note("restmcp.outputs", [f"outputs {json.dumps(restmcp['outputs'], sort_keys=True)} (expected {json.dumps(expect['outputs'], sort_keys=True)})"])
            if "failed_step" in expect and not restmcp["success"] and expect["failed_step"] not in restmcp["text"]:
                note("restmcp.failed_step", [f"the error does not name step {expect['failed_step']!r}: {harness.short(restmcp['text'], 500)}"])
            note("restmcp.timing", timing_problems(restmcp["requests"], expect.get("min_gaps")))
    if respect is not None and restmcp is not None and respect["ran"] and restmcp["ran"]:
        a = [canonical(e) for e in respect["requests"]]
        b = [canonical(e) for e in restmcp["requests"]]
        if a != b:
            problems = []
            for i in range(max(len(a), len(b))):
                x = show(respect["requests"][i]) if i < len(a) else "(none)"
                y = show(restmcp["requests"][i]) if i < len(b) else "(none)"
                if i >= len(a) or i >= len(b) or a[i] != b[i]:
                    problems.append(f"#{i + 1}: respect {x} | restmcp {y}")
            note("diff.requests", problems)
        if respect["success"] != restmcp["success"]:
            note("diff.success", [f"respect {'succeeded' if respect['success'] else 'failed'}, restmcp {'succeeded' if restmcp['success'] else 'failed'}"])
    return differs, evaluated


def load_known(path: Path) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(case, run) -> facet -> its entry."""
    known: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for entry in yaml.safe_load(path.read_text()) or []:
        for field in ("case", "run", "facets", "side", "title", "clause"):
            if field not in entry:
                raise ValueError(f"{path}: an entry without `{field}`: {entry}")
        for facet in entry["facets"]:
            if facet not in FACETS:
                raise ValueError(f"{path}: unknown facet {facet!r} in {entry['case']}/{entry['run']}")
            known.setdefault((entry["case"], entry["run"]), {})[facet] = entry
    return known


# --------------------------------------------------------------------------------------
# Main


CHECK_OUT: dict[str, str] = {}  # case -> the output of `restmcp check` on its config


def check_says(case: Case, workflow: str) -> str:
    """The lines of `restmcp check` about this workflow (its heading and what follows it)."""
    lines = CHECK_OUT.get(case.name, "").splitlines()
    for i, line in enumerate(lines):
        if re.search(rf"\bworkflow {re.escape(workflow)}\b", line):
            out = [line.strip()]
            for more in lines[i + 1:i + 4]:
                if re.search(r"^\s*workflow ", more) or not more.startswith(" "):
                    break
                out.append(more.strip())
            return " | ".join(out)[:800]
    return "(nothing about this workflow)"


def restmcp_supports_workflows(bin_path: str, config: Path) -> tuple[bool, str]:
    proc = subprocess.run([bin_path, "check", "--config", str(config)], capture_output=True, text=True, timeout=60,
                          env=child_env({}), cwd=config.parent)
    out = proc.stdout + proc.stderr
    (config.parent / "check.out").write_text(out)
    if "unknown field" in out and "workflows" in out:
        return False, out.strip().splitlines()[0] if out.strip() else ""
    return True, out


async def main_async(args: argparse.Namespace) -> int:
    corpus = Path(args.corpus)
    try:
        cases = [Case(d) for d in sorted(corpus.iterdir()) if (d / "case.yaml").is_file()]
        known = load_known(Path(args.known))
    except (ValueError, KeyError, yaml.YAMLError) as e:
        print(f"FAIL the corpus or known.yaml does not load: {e}")
        print("arazzo: 0 passed, 1 failed")
        return 1
    if args.only:
        wanted = set(args.only)
        cases = [c for c in cases if c.name in wanted]
        if missing := wanted - {c.name for c in cases}:
            print(f"FAIL no such case: {', '.join(sorted(missing))}")
            return 1
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    port = free_port()
    app = Child("upstream", [sys.executable, "-m", "uvicorn", "upstream:app", "--app-dir", str(HERE), "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "warning", "--no-access-log"],
                child_env({"PYTHONDONTWRITEBYTECODE": "1", "ARAZZO_ACCESS_LOG": str(work / "upstream-access.jsonl")}), work)
    CHILDREN.append(app)
    upstream = Upstream(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx2.get(upstream.url + "/__arazzo/log", timeout=2).raise_for_status()
            break
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline or app.proc.poll() is not None:
                print(f"FAIL the scripted upstream did not start: {harness.short(app.text(), 1500)}")
                return 1
            await anyio.sleep(0.1)

    passed = failed = 0
    sides = {"both": ("respect", "restmcp"), "respect": ("respect",), "restmcp": ("restmcp",)}[args.side]
    seen_runs: set[tuple[str, str]] = set()
    for case in cases:
        cwork = work / case.name
        cwork.mkdir(parents=True, exist_ok=True)
        url = None
        server = None
        case_problem = None
        if "restmcp" in sides:
            mport = free_port()
            config = cwork / "config.toml"
            write_config(case, upstream.url, mport, config)
            ok, said = restmcp_supports_workflows(args.bin, config)
            CHECK_OUT[case.name] = said
            if not ok:
                case_problem = f"this restmcp binary does not accept [workflows] ({said})"
            else:
                server = Child(f"restmcp serve {case.name}", [args.bin, "serve", "--config", str(config)], child_env({}), cwork)
                CHILDREN.append(server)
                try:
                    server.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
                    url = f"http://127.0.0.1:{mport}/mcp"
                except RuntimeError as e:
                    case_problem = f"restmcp serve did not start: {harness.short(str(e), 1500)}"
        for run in case.runs:
            label = f"{case.name}/{run_name(run)}"
            seen_runs.add((case.name, run_name(run)))
            t0 = time.monotonic()
            respect = run_respect(args, case, run, upstream, cwork) if "respect" in sides else None
            t1 = time.monotonic()
            restmcp = None
            if "restmcp" in sides:
                if case_problem is not None:
                    restmcp = {"ran": False, "why": case_problem, "requests": []}
                else:
                    restmcp = await run_restmcp(case, run, upstream, url)
            t2 = time.monotonic()
            if respect is not None:
                respect["took"] = t1 - t0
            if restmcp is not None:
                restmcp["took"] = t2 - t1
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", run_name(run))
            (cwork / f"requests-{slug}.json").write_text(json.dumps({"respect": respect, "restmcp": restmcp}, indent=1, default=str))
            differs, evaluated = judge(run, respect, restmcp)
            listed = known.get((case.name, run_name(run)), {})
            judged = {f: e for f, e in listed.items() if f in evaluated}
            unlisted = {f: why for f, why in differs.items() if f not in judged}
            stale = [f for f in judged if f not in differs]
            summary = describe_sides(respect, restmcp)
            if not unlisted and not stale:
                passed += 1
                extra = f"; known: {', '.join(sorted(judged))}" if judged else ""
                print(f"pass {label}: {summary}{extra}", flush=True)
            else:
                failed += 1
                print(f"FAIL {label}: {summary}", flush=True)
                for facet, problems in unlisted.items():
                    for p in problems:
                        print(f"    {facet}: {p}", flush=True)
                for facet in stale:
                    print(f"    {facet}: listed in known.yaml ({judged[facet]['title']}) but no longer differs (STALE)", flush=True)
        if server is not None:
            server.stop()
            (cwork / "restmcp.log").write_text(server.text() + "\n")
    for key in known:
        if key not in seen_runs and (not args.only or key[0] in args.only):
            failed += 1
            print(f"FAIL {key[0]}/{key[1]}: listed in known.yaml but no such run in the corpus", flush=True)
    (work / "upstream.log").write_text(app.text() + "\n")
    print(f"arazzo: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


def describe_sides(respect: dict[str, Any] | None, restmcp: dict[str, Any] | None) -> str:
    parts = []
    for name, side in (("respect", respect), ("restmcp", restmcp)):
        if side is None:
            continue
        if not side["ran"]:
            parts.append(f"{name} did not run")
        else:
            parts.append(f"{name} {'ok' if side['success'] else 'failed'} after {len(side['requests'])} requests"
                         + (f" ({side['took']:.1f} s)" if "took" in side else ""))
    return ", ".join(parts)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True, help="the restmcp binary")
    p.add_argument("--node", required=True, help="node (>= 20.19)")
    p.add_argument("--respect", required=True, help="@redocly/cli's bin/cli.js")
    p.add_argument("--corpus", default=str(HERE / "corpus"))
    p.add_argument("--known", default=str(HERE / "known.yaml"))
    p.add_argument("--work", required=True, help="where configs and logs go")
    p.add_argument("--only", action="append", help="run only this case (repeatable)")
    p.add_argument("--side", choices=["both", "respect", "restmcp"], default="both")
    args = p.parse_args()
    harness.install_signals("arazzo", 1800)
    try:
        return anyio.run(main_async, args)
    finally:
        kill_all()


if __name__ == "__main__":
    sys.exit(main())
