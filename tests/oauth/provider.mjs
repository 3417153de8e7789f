// A real OpenID provider for restmcp's OAuth tests: oidc-provider (npm, OpenID
// Certified, pinned in package-lock.json), configured, plus one grant of ours.
// Discovery, JWKS, token, introspection, dynamic registration, authorization
// code + PKCE and the login/consent pages are the provider's own; the only
// handler of ours is RFC 8693 token exchange, because oidc-provider has no
// built-in token-exchange grant (it offers registerGrantType() for such
// extensions, which is what is used here).
//
//   node provider.mjs [--port N] [--kid KID]
//
// Listens on 127.0.0.1:N (0 = a free port) with issuer http://127.0.0.1:N and
// prints one line "READY <issuer>" on stdout once it accepts connections.
// An RSA signing key (RS256) is generated at every start, with kid KID
// (default: random), so restarting on the same port gives the same issuer
// with a different published key: the key-rotation test.
//
// Clients (client_secret_basic; secrets from the environment, with fixed test
// defaults that only the test uses):
//   svc         client_credentials, JWT access tokens, 1 h   OAUTH_TEST_SVC_SECRET
//   svc-short   client_credentials, JWT access tokens, 2 s   OAUTH_TEST_SVC_SHORT_SECRET
//   svc-opaque  client_credentials, opaque access tokens     OAUTH_TEST_SVC_OPAQUE_SECRET
//   restmcp     the resource server's own client, for introspection
//                                                            OAUTH_TEST_INTROSPECTION_SECRET
//   exchanger   RFC 8693 token exchange only                 OAUTH_TEST_EXCHANGER_SECRET
// and any client registered dynamically (POST /reg, RFC 7591; public or
// confidential) for the authorization-code flow with PKCE. Users log in on
// oidc-provider's built-in development pages (devInteractions): any login name
// with any password; the account id, and so `sub`, is the login name. Consent
// is one "Continue" button.
// A dynamically registered client may ask for any of the scopes below, whatever
// `scope` it registered with: oidc-provider would otherwise hold it to that
// registered scope (answering invalid_scope "requested scope is not allowed"),
// and the MCP SDKs register with the scope of their first challenge and step up
// later (403 insufficient_scope) without registering again.
// Every resource indicator is accepted (a test can ask for a wrong audience);
// the token's `aud` is the resource asked for, its scope the requested subset
// of: mcp:tools pets:read pets:write other echo:read echo:admin.
//
// Token exchange (grant_type urn:ietf:params:oauth:grant-type:token-exchange,
// client `exchanger` only): subject_token must be a JWT access token of this
// provider (RS256 with its current key, typ at+jwt, its iss, not expired),
// subject_token_type urn:ietf:params:oauth:token-type:access_token; exactly one
// target, `resource` or `audience`; `scope` a subset of the scopes above. The
// answer is a new JWT access token (same sub, aud = the target, the scope,
// client_id exchanger, act {sub: exchanger}), issued_token_type
// urn:ietf:params:oauth:token-type:access_token. Errors are RFC 8693 section
// 2.2.2 / RFC 6749 section 5.2 JSON (invalid_request, invalid_grant,
// invalid_scope, invalid_target) with an error_description.
// GET /__test/exchanges answers {"ok": n, "failed": n, "bySubject": {sub: n}}
// (counts since start), so a test can see whether a caller exchanged again.
// GET /__test/introspections answers {"count": n}: the POSTs to the introspection
// endpoint since start, counted before oidc-provider sees them (whatever it answers),
// so a test can see how many introspections a flood of made-up tokens cost.
//
// It exits when its parent goes away (stdin closed, or reparented).
import { createPublicKey, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.OAUTH_TEST_PORT ?? '0' },
    kid: { type: 'string', default: process.env.OAUTH_TEST_KID ?? '' },
  },
});

function fail(message) {
  process.stderr.write(`provider.mjs: ${message}\n`);
  process.exit(1);
}

const port = Number(args.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`bad --port ${args.port}`);

export const SCOPES = ['mcp:tools', 'pets:read', 'pets:write', 'other', 'echo:read', 'echo:admin'];
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const scopeList = SCOPES.join(' ');

const secret = (name, fallback) => process.env[name] || fallback;
const serviceClient = (client_id, secretEnv, fallback) => ({
  client_id,
  client_secret: secret(secretEnv, fallback),
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: scopeList,
});

const clients = [
  serviceClient('svc', 'OAUTH_TEST_SVC_SECRET', 'svc-test-secret-5b1f0c'),
  serviceClient('svc-short', 'OAUTH_TEST_SVC_SHORT_SECRET', 'svc-short-test-secret-81d2a4'),
  serviceClient('svc-opaque', 'OAUTH_TEST_SVC_OPAQUE_SECRET', 'svc-opaque-test-secret-2e77c9'),
  {
    ...serviceClient('restmcp', 'OAUTH_TEST_INTROSPECTION_SECRET', 'restmcp-introspection-secret-c43a90'),
    grant_types: [],
  },
  {
    ...serviceClient('exchanger', 'OAUTH_TEST_EXCHANGER_SECRET', 'exchanger-test-secret-7d3e91'),
    grant_types: [TOKEN_EXCHANGE],
  },
];

// A fresh RSA key at every start: a restart publishes a different JWKS.
const kid = args.kid || `key-${randomUUID()}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
const publicKey = createPublicKey(privateKey);

function resourceServerInfo(resource, clientId) {
  return {
    scope: scopeList,
    audience: resource,
    accessTokenFormat: clientId === 'svc-opaque' ? 'opaque' : 'jwt',
    accessTokenTTL: clientId === 'svc-short' ? 2 : 3600,
    jwt: { sign: { alg: 'RS256' } },
  };
}

function configuration() {
  return {
    clients,
    // Drops the registered `scope` of a dynamically registered client (ctx is set
    // for a registration request, unset for the static clients above), so a
    // scope step-up is not refused for being outside it. The only way to change
    // standard metadata oidc-provider offers: the validator of an extra property
    // runs on the whole metadata, before the standard checks.
    extraClientMetadata: {
      properties: ['x_restmcp_test'],
      validator: (ctx, _key, _value, metadata) => {
        if (ctx) delete metadata.scope;
      },
    },
    jwks: { keys: [jwk] },
    scopes: ['openid', ...SCOPES],
    features: {
      devInteractions: { enabled: true }, // login: any name (= sub), any password
      registration: { enabled: true }, // RFC 7591, open (no initial access token)
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Any resource URL is a resource server: a wrong-audience token can be had.
        getResourceServerInfo: async (_ctx, resource, client) => resourceServerInfo(resource, client.clientId),
        useGrantedResource: async () => true,
      },
    },
    // Client-credentials tokens have no account: give them `sub` = client_id in
    // introspection too (the JWT format already does so). Exchanged tokens (the
    // only account tokens client `exchanger` gets) name it as the actor (RFC 8693 act).
    extraTokenClaims: async (_ctx, token) => {
      if (!token.accountId) return { sub: token.clientId };
      if (token.clientId === 'exchanger') return { act: { sub: 'exchanger' } };
      return undefined;
    },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
    },
    // Refresh tokens for clients registered for them. Without a non-default
    // issueRefreshToken (or an offline_access scope) oidc-provider does not
    // support the refresh_token grant at all and rejects the registration of
    // the MCP SDKs, whose default grant_types include it.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    clockTolerance: 0,
  };
}

// ---------------------------------------------------------------- RFC 8693
// oidc-provider has no built-in token-exchange grant; this is the smallest one
// it allows: registerGrantType() with the provider's own AccessToken model and
// ResourceServer class, so the exchanged token is signed, formatted and timed
// exactly like the provider's other JWT access tokens.

const exchanges = { ok: 0, failed: 0, bySubject: {} };
const introspections = { count: 0 };

class ExchangeError extends Error {
  constructor(error, description) {
    super(description);
    this.error = error;
  }
}

const b64json = (part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

// The subject token must be an access token this provider issued: a JWT with
// typ at+jwt, signed RS256 with the current key, this issuer, not expired.
function verifySubjectToken(token, issuer) {
  const bad = (why) => new ExchangeError('invalid_grant', `subject_token ${why}`);
  const parts = String(token).split('.');
  if (parts.length !== 3) throw bad('is not a JWT access token of this provider');
  let header;
  let payload;
  try {
    header = b64json(parts[0]);
    payload = b64json(parts[1]);
  } catch {
    throw bad('is not a JWT access token of this provider');
  }
  if (header.alg !== 'RS256' || header.kid !== kid) throw bad("is not signed with this provider's current key");
  if (header.typ !== 'at+jwt') throw bad('is not an access token (typ is not at+jwt)');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  if (!verify('RSA-SHA256', signed, publicKey, Buffer.from(parts[2], 'base64url'))) throw bad('has an invalid signature');
  if (payload.iss !== issuer) throw bad('was issued by another issuer');
  if (typeof payload.exp !== 'number' || payload.exp <= Date.now() / 1000) throw bad('is expired');
  if (typeof payload.sub !== 'string' || !payload.sub) throw bad('has no subject');
  return payload;
}

function tokenExchangeHandler(provider) {
  return async function tokenExchange(ctx) {
    try {
      const { client, params } = ctx.oidc;
      if (client.clientId !== 'exchanger') {
        throw new ExchangeError('unauthorized_client', 'this client may not exchange tokens');
      }
      if (!params.subject_token) throw new ExchangeError('invalid_request', 'subject_token is required');
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
        throw new ExchangeError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
      }
      if (params.requested_token_type && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
        throw new ExchangeError('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE} (or absent)`);
      }
      if (params.actor_token) throw new ExchangeError('invalid_request', 'actor_token is not supported');
      const targets = [params.resource, params.audience].filter(Boolean);
      if (targets.length !== 1) {
        throw new ExchangeError('invalid_target', 'exactly one of resource or audience is required');
      }
      const [target] = targets;
      const scopes = (params.scope ?? '').split(' ').filter(Boolean);
      const unknown = scopes.filter((s) => !SCOPES.includes(s));
      if (unknown.length) throw new ExchangeError('invalid_scope', `scope not allowed: ${unknown.join(' ')}`);

      const subject = verifySubjectToken(params.subject_token, provider.issuer);
      const token = new provider.AccessToken({
        accountId: subject.sub,
        client,
        scope: scopes.join(' ') || undefined,
      });
      token.resourceServer = new provider.ResourceServer(target, resourceServerInfo(target, client.clientId));
      const value = await token.save();

      exchanges.ok++;
      exchanges.bySubject[subject.sub] = (exchanges.bySubject[subject.sub] ?? 0) + 1;
      ctx.body = {
        access_token: value,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: token.expiration,
        ...(token.scope ? { scope: token.scope } : {}),
      };
    } catch (e) {
      exchanges.failed++;
      if (!(e instanceof ExchangeError)) throw e;
      ctx.status = 400;
      ctx.body = { error: e.error, error_description: e.message };
    }
  };
}

// The provider is built once the port is known, so the issuer names the real port.
const server = createServer();
server.on('error', (e) => fail(`cannot listen on 127.0.0.1:${port}: ${e.message}`));
server.listen(port, '127.0.0.1', () => {
  const actual = server.address().port;
  const iss = `http://127.0.0.1:${actual}`;
  let provider;
  try {
    provider = new Provider(iss, configuration());
  } catch (e) {
    fail(`oidc-provider configuration rejected: ${e.message}`);
  }
  provider.proxy = false;
  provider.registerGrantType(TOKEN_EXCHANGE, tokenExchangeHandler(provider), [
    'subject_token',
    'subject_token_type',
    'actor_token',
    'actor_token_type',
    'requested_token_type',
    'resource',
    'audience',
    'scope',
  ]);
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.method === 'GET' && req.url === '/__test/exchanges') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(exchanges));
      return;
    }
    if (req.method === 'GET' && req.url === '/__test/introspections') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(introspections));
      return;
    }
    if (req.method === 'POST' && req.url.split('?')[0] === '/token/introspection') introspections.count++;
    callback(req, res);
  });
  process.stdout.write(`READY ${iss}\n`);
});

// Die with the parent: when stdin is a pipe (as spawned by test.mjs) its end
// means the parent is gone; in any case a change of parent pid does.
const parent = process.ppid;
const stdin = fstatSync(0);
if (stdin.isFIFO() || stdin.isSocket()) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 500).unref();
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
