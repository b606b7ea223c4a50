// The deployment files (Dockerfile, .dockerignore, compose.yaml, deploy/temp-inbox.service,
// and the environment example in docs/deploy.md) against the service they start: the
// node flags of `npm start`, only variables the service knows, with values it accepts,
// the ports the shipped nginx file expects, and a unit systemd accepts. Containers are
// not built on our machines (docs/deploy.md "What our tests run"): instead the
// Dockerfile is checked by dockerfile-utils (the Docker language server's diagnostics)
// and its parsed instructions against the rules that keep builds cached and the
// image small; compose.yaml is parsed as YAML and checked for health checks, start-up
// order and a single build.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { DockerfileParser } from 'dockerfile-ast';
import { validate as dockerfileDiagnostics } from 'dockerfile-utils';
import { parse as parseYaml } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config/index.js';

const root = (path: string) => fileURLToPath(new URL(`../../../../${path}`, import.meta.url));
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

interface Step {
  keyword: string;
  /** The arguments, continuation lines joined. */
  args: string;
  /** Flags such as from=build, lower-cased names. */
  flags: Map<string, string | null>;
  line: number;
}
interface Stage {
  name: string | null;
  /** The image or earlier stage it starts from. */
  from: string;
  steps: Step[];
}

/** The Dockerfile's build stages, each with its instructions in order. */
function dockerStages(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of DockerfileParser.parse(text).getInstructions()) {
    const keyword = instruction.getKeyword();
    const args = instruction.getArguments().map((a) => a.getValue()).join(' ');
    const flags = new Map<string, string | null>();
    if ('getFlags' in instruction && typeof instruction.getFlags === 'function') {
      for (const f of (instruction as unknown as { getFlags(): { getName(): string; getValue(): string | null }[] }).getFlags()) flags.set(f.getName().toLowerCase(), f.getValue());
    }
    const step = { keyword, args, flags, line: instruction.getRange().start.line };
    if (keyword === 'FROM') {
      const words = args.split(' ');
      stages.push({ name: /^as$/i.test(words[1] ?? '') ? words[2]! : null, from: words[0]!, steps: [] });
    } else {
      assert.ok(stages.length > 0, `${keyword} before any FROM`);
      stages.at(-1)!.steps.push(step);
    }
  }
  return stages;
}

/** The stage and every stage it is built FROM, nearest first. */
function lineage(stages: Stage[], stage: Stage): Stage[] {
  const out = [stage];
  for (let s = stages.find((x) => x.name === stage.from); s; s = stages.find((x) => x.name === s!.from)) out.push(s);
  return out;
}

const COMPILER = /\b(apt-get|apk|g\+\+|gcc|make|python3|build-essential)\b/;

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  network_mode?: string;
}

function compose(): Record<string, ComposeService> {
  // merge: compose.yaml's nodes share one map through a YAML merge key (<<), as Compose reads it.
  const doc = parseYaml(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };
  return doc.services;
}

const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
const nodeRange = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
/** deploy/check-node.cjs, the unit's ExecStartPre. */
const nodeCheck = createRequire(import.meta.url)(root('deploy/check-node.cjs')) as {
  satisfies(version: string, range: string): boolean;
  problem(version: string, range: string, execPath: string): string | null;
};
/** The lower bound of each range of engines.node (">=20", "^20.19.0 || ^22.13.0"). */
const nodeFloors = nodeRange.split('||').map((r) => r.trim().replace(/^(>=|\^)/, ''));

describe('deployment files', () => {
  it('the Dockerfile: no diagnostics from dockerfile-utils', () => {
    const diagnostics = dockerfileDiagnostics(read('Dockerfile'));
    assert.deepEqual(diagnostics.map((d) => `line ${d.range.start.line + 1}: ${d.message}`), []);
  });

  it('the Dockerfile installs with npm ci from the lockfile and every workspace manifest before it copies a source', () => {
    const stages = dockerStages(read('Dockerfile'));
    const all = stages.flatMap((s) => s.steps);
    assert.ok(!all.some((s) => s.keyword === 'RUN' && /\bnpm (install|i)\b/.test(s.args)), 'no `npm install`: it may change the lockfile');
    const deps = stages.find((s) => s.steps.some((x) => x.keyword === 'RUN' && /\bnpm ci\b/.test(x.args) && !/--omit=dev/.test(x.args)));
    assert.ok(deps, 'a stage runs npm ci');
    const ci = deps.steps.findIndex((x) => x.keyword === 'RUN' && /\bnpm ci\b/.test(x.args));
    const before = deps.steps.slice(0, ci).filter((x) => x.keyword === 'COPY' || x.keyword === 'ADD');
    const copied = before.flatMap((x) => x.args.split(' ').slice(0, -1));
    for (const file of ['package.json', 'package-lock.json', ...workspaces.map((w) => `${w}/package.json`)]) {
      assert.ok(copied.includes(file), `${file} is copied before npm ci (npm ci needs every workspace's manifest)`);
    }
    for (const src of copied) assert.match(src, /(^|\/)package(-lock)?\.json$/, `only manifests before npm ci, so a source edit keeps the install cached (not ${src})`);
    // The build starts from the installed stage (or continues it) and copies the sources only then.
    const build = stages.find((s) => s.steps.some((x) => x.keyword === 'RUN' && /\bnpm run build\b/.test(x.args)));
    assert.ok(build, 'a stage runs npm run build');
    assert.ok(lineage(stages, build).includes(deps), 'the build stage starts from the npm ci stage');
    const sources = build.steps.filter((x) => x.keyword === 'COPY' && !x.flags.has('from') && /\bpackages\b/.test(x.args) && !/package\.json/.test(x.args));
    assert.ok(sources.length > 0, 'the build copies the sources');
    const ciLine = deps.steps[ci]!.line;
    for (const s of sources) assert.ok(s.line > ciLine, 'the sources are copied after npm ci');
    // The compiler better-sqlite3 needs is in the install stage, not in what runs.
    assert.ok(lineage(stages, deps).some((s) => s.steps.some((x) => x.keyword === 'RUN' && /\bg\+\+/.test(x.args))), 'the install stage has a compiler');
  });

  it('the Dockerfile: the runtime stage has production dependencies only, no compiler, a non-root user and a HEALTHCHECK, and runs with the flags of npm start', () => {
    const dockerfile = read('Dockerfile');
    const stages = dockerStages(dockerfile);
    const runtime = stages.at(-1)!;
    assert.ok(!stages.some((s) => s.name === runtime.from), 'the runtime stage starts from the base image, not from a stage with the compiler');
    for (const s of runtime.steps.filter((x) => x.keyword === 'RUN')) {
      assert.doesNotMatch(s.args, COMPILER, `the runtime stage installs nothing: ${s.args}`);
      assert.doesNotMatch(s.args, /\bnpm\b/, `the runtime stage runs no npm: ${s.args}`);
    }
    // node_modules comes from a stage that dropped the development dependencies.
    const fromStages = runtime.steps.filter((x) => x.keyword === 'COPY' && x.flags.has('from')).map((x) => stages.find((s) => s.name === x.flags.get('from'))!);
    assert.ok(fromStages.every(Boolean), 'every COPY --from names a stage');
    const prodDeps = fromStages.filter((s) => s.steps.some((x) => x.keyword === 'RUN' && /npm (prune|ci) .*--omit=dev/.test(x.args)));
    assert.ok(prodDeps.length > 0, 'the runtime copies from a stage that ran npm prune/ci --omit=dev');
    for (const x of runtime.steps.filter((s) => s.keyword === 'COPY' && s.flags.has('from'))) {
      const stage = stages.find((s) => s.name === x.flags.get('from'))!;
      if (prodDeps.includes(stage)) continue;
      assert.match(x.args, /\/dist(-admin)?\/? /, `from the build stage only built files are copied (not ${x.args})`);
    }
    // Every build output the server serves or runs (scripts/setup.mjs's list; the client SDK is not run).
    const built = JSON.parse(/const BUILT = (\[[^\]]*\])/.exec(read('scripts/setup.mjs'))![1]!.replace(/'/g, '"')) as string[];
    const copiedBuilt = runtime.steps.filter((x) => x.keyword === 'COPY' && !prodDeps.includes(stages.find((s) => s.name === x.flags.get('from'))!)).map((x) => x.args.split(' ')[0]!.replace(/^\/app\/|\/$/g, ''));
    assert.deepEqual(copiedBuilt.sort(), built.filter((d) => !d.startsWith('packages/client/')).sort());
    const users = runtime.steps.filter((x) => x.keyword === 'USER');
    assert.ok(users.length > 0, 'a USER in the runtime stage');
    assert.doesNotMatch(users.at(-1)!.args, /^(root|0)(:|$)/, 'not root');
    assert.equal(users.at(-1)!.args, 'node');
    assert.equal(runtime.steps.filter((x) => x.keyword === 'HEALTHCHECK').length, 1, 'a HEALTHCHECK in the runtime stage');
    assert.match(runtime.steps.find((x) => x.keyword === 'HEALTHCHECK')!.args, /CMD .*\/health_check/);
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    assert.ok(cmd, 'a CMD in exec form');
    assert.deepEqual(JSON.parse(cmd[1]!), ['node', ...startFlags, 'packages/server/dist/main.js']);
    assert.match(dockerfile, /^VOLUME \["\/data"\]$/m);
  });

  it('.dockerignore keeps what the host installed or built, data, secrets and .git out of the build context, and nothing the Dockerfile copies', () => {
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const p of ['.git', '**/node_modules', '**/dist', '**/dist-admin', '.env', 'data']) assert.ok(ignore.includes(p), `.dockerignore lists ${p}`);
    const copied = dockerStages(read('Dockerfile'))
      .flatMap((s) => s.steps)
      .filter((x) => x.keyword === 'COPY' && !x.flags.has('from'))
      .flatMap((x) => x.args.split(' ').slice(0, -1));
    for (const src of copied) {
      const path = src.replace(/\/$/, '');
      assert.ok(path !== '.' && path !== '', 'the whole tree is never copied: one edit would invalidate every later layer');
      assert.ok(!ignore.includes(path), `${src} is copied but ignored`);
      readFileSync(root(path === 'packages' ? 'packages/server/package.json' : path));
    }
  });

  it('the Dockerfile sets only variables the service knows, with values it accepts', () => {
    const env = dockerEnv(read('Dockerfile'));
    assert.ok(Object.keys(env).length >= 5);
    for (const k of Object.keys(env)) assert.ok(KNOWN.has(k), `${k} is not a configuration variable`);
    const config = loadConfig(env);
    assert.equal(config.storage.dataDir, '/data');
    assert.equal(config.http.host, '0.0.0.0');
  });

  it('compose.yaml: the nodes set only known variables and listen where the shipped nginx file sends them', () => {
    const services = compose();
    for (const name of ['node1', 'node2']) {
      const env = services[name]?.environment;
      assert.ok(env, `${name} has an environment`);
      for (const k of Object.keys(env)) assert.ok(KNOWN.has(k), `${name}: ${k} is not a configuration variable`);
      assert.equal(services[name]!.network_mode, 'service:proxy');
    }
    const upstream = [...read('deploy/nginx/temp-inbox.conf').matchAll(/^\s*server (127\.0\.0\.1:\d+);/gm)].map((m) => m[1]);
    const node1 = services['node1']!.environment!;
    const node2 = services['node2']!.environment!;
    assert.equal(node1['TRUST_PROXY'], '1');
    assert.equal(node2['TRUST_PROXY'], '1');
    assert.equal(node2['JWT_SECRET'], node1['JWT_SECRET'], 'the same secrets on every node');
    assert.deepEqual(upstream, [`${node1['HTTP_HOST']}:${node1['HTTP_PORT']}`, `${node2['HTTP_HOST']}:${node2['HTTP_PORT']}`]);
  });

  it('compose.yaml: every service has a health check, the nodes start once what they need is healthy, and the image is built once', () => {
    const services = compose();
    for (const [name, service] of Object.entries(services)) {
      assert.ok(service.healthcheck?.test && !service.healthcheck.disable, `${name} has a health check`);
    }
    const needs: Record<string, string[]> = { node1: ['proxy', 'postgres', 'redis'], node2: ['node1', 'postgres', 'redis'] };
    for (const [name, wanted] of Object.entries(needs)) {
      const deps = services[name]!.depends_on;
      assert.ok(deps && !Array.isArray(deps), `${name}: depends_on with conditions`);
      for (const dep of wanted) assert.equal(deps[dep]?.condition, 'service_healthy', `${name} waits for ${dep} to be healthy`);
    }
    const built = Object.entries(services).filter(([, s]) => s.build !== undefined);
    assert.deepEqual(built.map(([n]) => n), ['node1'], 'only node1 builds');
    const image = services['node1']!.image;
    assert.ok(image, 'node1 names the image it builds');
    assert.equal(services['node2']!.image, image, 'node2 runs the image node1 built');
  });

  it('the systemd unit checks the Node version, then runs the server with the flags of npm start and known variables, and systemd-analyze accepts it', (t) => {
    const unit = read('deploy/temp-inbox.service');
    const exec = /^ExecStart=(.+)$/m.exec(unit);
    assert.ok(exec);
    assert.deepEqual(exec[1]!.split(/\s+/), ['/usr/bin/node', ...startFlags, '/opt/temp-inbox/packages/server/dist/main.js']);
    for (const m of unit.matchAll(/^Environment=([A-Z_]+)=/gm)) assert.ok(KNOWN.has(m[1]!), `${m[1]} is not a configuration variable`);

    // The check runs the same node as ExecStart, before it, and refuses what package.json's engines refuses.
    assert.equal(/^ExecStartPre=(.+)$/m.exec(unit)?.[1], '/usr/bin/node /opt/temp-inbox/deploy/check-node.cjs');
    assert.ok(unit.indexOf('ExecStartPre=') < unit.indexOf('ExecStart='));
    const here = spawnSync(process.execPath, [root('deploy/check-node.cjs')], { encoding: 'utf8' });
    assert.deepEqual({ status: here.status, stderr: here.stderr }, { status: 0, stderr: '' }, `passes on this Node (${process.version})`);
    for (const version of [...nodeFloors, process.versions.node]) assert.equal(nodeCheck.problem(version, nodeRange, '/usr/bin/node'), null, `${version} passes`);
    for (const version of ['18.19.0', '12.22.9', '19.9.0']) {
      const line = nodeCheck.problem(version, nodeRange, '/usr/bin/node');
      assert.equal(line, `temp-inbox needs Node.js ${nodeRange} (package.json "engines"), but /usr/bin/node is ${version} (Debian 12 packages Node 18): install a current Node from NodeSource or nodejs.org, see docs/deploy.md section 4.`);
    }
    // The ranges as engines writes them: >= any later version, ^ within its major.
    const cases: [string, string, boolean][] = [
      ['20.0.0', '>=20', true],
      ['19.9.9', '>=20', false],
      ['26.1.0', '>=20', true],
      ['20.18.3', '^20.19.0 || ^22.13.0', false],
      ['20.19.0', '^20.19.0 || ^22.13.0', true],
      ['21.7.0', '^20.19.0 || ^22.13.0', false],
      ['22.12.0', '^20.19.0 || ^22.13.0', false],
      ['22.13.1', '^20.19.0 || ^22.13.0', true],
      ['v24.0.0', '^20.19.0 || ^24.0.0', true],
    ];
    for (const [version, range, ok] of cases) assert.equal(nodeCheck.satisfies(version, range), ok, `${version} in ${range}`);
    assert.throws(() => nodeCheck.satisfies('20.0.0', '20.x'), /cannot read the range "20\.x"/);

    const verify = spawnSync('systemd-analyze', ['verify', root('deploy/temp-inbox.service')], { encoding: 'utf8' });
    if (verify.error) {
      const reason = `systemd-analyze cannot run here (${verify.error.message}; apt install systemd)`;
      assert.notEqual(process.env.REQUIRE_SERVICES, '1', `${reason}, and REQUIRE_SERVICES=1`);
      process.stderr.write(`\n!!!!! SKIPPED: systemd-analyze verify — ${reason} !!!!!\n\n`);
      t.skip(reason);
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
    assert.equal(config.smtp.port, 25);
    assert.deepEqual(config.mail.domains, ['example.com']);
  });
});
