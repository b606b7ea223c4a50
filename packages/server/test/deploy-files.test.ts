// The deployment files (Dockerfile, compose.yaml, deploy/temp-inbox.service, and the
// environment example in docs/deploy.md) against the service they start: the node
// flags of `npm start`, only variables the service knows, with values it accepts,
// the ports the shipped nginx file expects, and a unit systemd accepts. Containers
// are not built on our machines (docs/deploy.md "What our tests run").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_VARIABLES, loadConfig } from '../src/config/index.js';

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const read = (path: string) => readFileSync(root(path), 'utf8');
const KNOWN = new Set([...CONFIG_VARIABLES.map((v) => v.name), 'NODE_ENV']);

const startFlags = (() => {
  const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['start']!;
  return start.split(/\s+/).filter((w) => w.startsWith('--'));
})();

/** KEY=value pairs of the Dockerfile's ENV instructions (continued over lines with \). */
function dockerEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.replace(/\\\n/g, ' ').matchAll(/^ENV\s+(.+)$/gm)) {
    for (const pair of m[1]!.trim().split(/\s+/)) {
      const [k, v] = pair.split('=');
      out[k!] = v ?? '';
    }
  }
  return out;
}

/** Keys of compose.yaml's `environment:` maps (six-space indented KEY: value lines), per service. */
function composeEnv(text: string): Map<string, Record<string, string>> {
  const services = new Map<string, Record<string, string>>();
  let service: string | undefined;
  let inEnv = false;
  for (const line of text.split('\n')) {
    const s = /^ {2}([a-z0-9]+):/.exec(line);
    if (s) {
      service = s[1];
      inEnv = false;
      continue;
    }
    if (/^ {4}environment:/.test(line)) {
      inEnv = true;
      if (service && !services.has(service)) services.set(service, {});
      continue;
    }
    if (/^ {4}\S/.test(line) || /^\S/.test(line)) inEnv = false;
    const kv = /^ {6}([A-Z_]+):\s*"?([^"#]*)"?/.exec(line);
    if (inEnv && service && kv) services.get(service)![kv[1]!] = kv[2]!.trim();
  }
  return services;
}

describe('deployment files', () => {
  it('the Dockerfile builds with scripts/setup.mjs and runs the server with the flags of npm start', () => {
    const dockerfile = read('Dockerfile');
    assert.match(dockerfile, /RUN node scripts\/setup\.mjs --force/);
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    assert.ok(cmd, 'a CMD in exec form');
    assert.deepEqual(JSON.parse(cmd[1]!), ['node', ...startFlags, 'packages/server/dist/main.js']);
    assert.match(dockerfile, /^USER node$/m, 'not root');
    assert.match(dockerfile, /^VOLUME \["\/data"\]$/m);
    assert.match(dockerfile, /^HEALTHCHECK /m);
  });

  it('the Dockerfile sets only variables the service knows, with values it accepts', () => {
    const env = dockerEnv(read('Dockerfile'));
    assert.ok(Object.keys(env).length >= 5);
    for (const k of Object.keys(env)) assert.ok(KNOWN.has(k), `${k} is not a configuration variable`);
    const config = loadConfig(env);
    assert.equal(config.dataDir, '/data');
    assert.equal(config.httpHost, '0.0.0.0');
  });

  it('compose.yaml: the nodes set only known variables and listen where the shipped nginx file sends them', () => {
    const services = composeEnv(read('compose.yaml'));
    const nodes = ['node1', 'node2'].map((n) => [n, services.get(n)] as const);
    for (const [name, env] of nodes) {
      assert.ok(env, `${name} has an environment`);
      for (const k of Object.keys(env)) assert.ok(KNOWN.has(k), `${name}: ${k} is not a configuration variable`);
    }
    const upstream = [...read('deploy/nginx/temp-inbox.conf').matchAll(/^\s*server (127\.0\.0\.1:\d+);/gm)].map((m) => m[1]);
    // node2 inherits node1's map (a YAML merge) and overrides its ports.
    const node1 = services.get('node1')!;
    assert.equal(node1['TRUST_PROXY'], '1');
    assert.deepEqual(upstream, [`${node1['HTTP_HOST']}:${node1['HTTP_PORT']}`, `${node1['HTTP_HOST']}:${services.get('node2')!['HTTP_PORT']}`]);
  });

  it('the systemd unit runs the server with the flags of npm start and known variables, and systemd-analyze accepts it', (t) => {
    const unit = read('deploy/temp-inbox.service');
    const exec = /^ExecStart=(.+)$/m.exec(unit);
    assert.ok(exec);
    assert.deepEqual(exec[1]!.split(/\s+/), ['/usr/bin/node', ...startFlags, '/opt/temp-inbox/packages/server/dist/main.js']);
    for (const m of unit.matchAll(/^Environment=([A-Z_]+)=/gm)) assert.ok(KNOWN.has(m[1]!), `${m[1]} is not a configuration variable`);
    const verify = spawnSync('systemd-analyze', ['verify', root('deploy/temp-inbox.service')], { encoding: 'utf8' });
    if (verify.error) {
      t.skip(`systemd-analyze cannot run here (${verify.error.message})`);
      return;
    }
    assert.equal(verify.stderr.trim(), '', 'systemd-analyze verify has nothing to say');
    assert.equal(verify.status, 0);
  });

  it("docs/deploy.md's environment file sets only known variables, with values the service accepts", () => {
    const guide = read('docs/deploy.md');
    const block = /tee \/etc\/temp-inbox\/env >\/dev\/null <<'EOF'\n([\s\S]*?)\nEOF/.exec(guide);
    assert.ok(block, 'the guide has the environment file');
    const env = Object.fromEntries(block[1]!.split('\n').map((l) => l.split('=', 2) as [string, string]));
    for (const k of Object.keys(env)) assert.ok(KNOWN.has(k), `${k} is not a configuration variable`);
    const config = loadConfig(env);
    assert.equal(config.smtpPort, 25);
    assert.deepEqual(config.mailDomains, ['example.com']);
  });
});
