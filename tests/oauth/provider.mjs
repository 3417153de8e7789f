// A real OpenID provider for restmcp's OAuth resource-server tests: oidc-provider
// (npm, OpenID Certified, pinned in package-lock.json), configured and nothing
// more -- no handler of ours sits on the provider side, so what restmcp is
// tested against is the provider's own discovery, JWKS, token and
// introspection endpoints.
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
// Every resource indicator is accepted (a test can ask for a wrong audience);
// the token's `aud` is the resource asked for, its scope the requested subset
// of: mcp:tools pets:read pets:write other.
//
// It exits when its parent goes away (stdin closed, or reparented).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
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

export const SCOPES = ['mcp:tools', 'pets:read', 'pets:write', 'other'];
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
];

// A fresh RSA key at every start: a restart publishes a different JWKS.
const kid = args.kid || `key-${randomUUID()}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };

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
    jwks: { keys: [jwk] },
    scopes: ['openid', ...SCOPES],
    features: {
      devInteractions: { enabled: false },
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
    // introspection too (the JWT format already does so).
    extraTokenClaims: async (_ctx, token) => (token.accountId ? undefined : { sub: token.clientId }),
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
    },
    clockTolerance: 0,
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
  server.on('request', provider.callback());
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
