-- wrk script: tools/call getItem over Streamable HTTP, one JSON-RPC id per request.
-- MCP_SESSION (from initialize) selects the initialize-based protocol with a session;
-- without it the requests are stateless 2026-07-28 ones carrying their own _meta.
local session = os.getenv("MCP_SESSION")
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  counter = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  if session and session ~= "" then
    wrk.headers["Mcp-Session-Id"] = session
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
    meta = ""
  else
    wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
    wrk.headers["Mcp-Method"] = "tools/call"
    wrk.headers["Mcp-Name"] = "getItem"
    meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
      '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"},' ..
      '"io.modelcontextprotocol/clientCapabilities":{}}'
  end
end

function request()
  counter = counter + 1
  local id = tid * 1000000000 + counter
  local body = '{"jsonrpc":"2.0","id":' .. id ..
    ',"method":"tools/call","params":{"name":"getItem","arguments":{"id":' ..
    (counter % 1000 + 1) .. '}' .. meta .. '}}'
  return wrk.format(nil, nil, nil, body)
end
