// deploy/grafana/temp-inbox.json, the Grafana dashboard of docs/operating.md "The operator's
// view", checked three ways: against Grafana's own dashboard types (@grafana/schema, the
// classic dashboard JSON model Grafana generates from its schema; compiled here with the
// dashboard as an object literal, so an unknown or mistyped field fails); for what Grafana
// needs to draw it (a schemaVersion, a Prometheus datasource variable, panels with unique
// ids, places on the 24-column grid that do not overlap, queries on that datasource); and
// every metric name of every PromQL expression against the families a real server exports
// at GET /metrics, which the dashboard must also cover in full (the process's own metrics aside);
// then a real Prometheus (Debian's) scrapes that server and answers every expression, as
// Grafana would ask it, without an error, with data where the traffic made some.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { createAddress, DOMAIN, message, request, sendMail, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';
import { prometheusMissing, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.js';

const FILE = new URL('../../../../deploy/grafana/temp-inbox.json', import.meta.url);
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const TOKEN = 'metrics-token-for-the-dashboard-test';

interface GridPos {
  h: number;
  w: number;
  x: number;
  y: number;
}
interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface PanelJson {
  id: number;
  type: string;
  title: string;
  gridPos: GridPos;
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

const text = readFileSync(FILE, 'utf8');
const dashboard = JSON.parse(text) as {
  schemaVersion: number;
  uid: string;
  title: string;
  panels: PanelJson[];
  templating: { list: { type: string; name: string; query: unknown; datasource?: { uid: string } }[] };
};

/** PromQL's functions, aggregations and keywords that can stand where a metric name could. */
const PROMQL_WORDS = new Set(['sum', 'max', 'min', 'avg', 'count', 'rate', 'irate', 'increase', 'histogram_quantile', 'label_values', 'by', 'without', 'and', 'or', 'unless', 'offset']);

/**
 * The metric names an expression reads: what is left once strings, label matchers, ranges,
 * groupings, variables and label_values' label are taken out, less PromQL's own words.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/label_values\(\s*([^,()]+),\s*\w+\s*\)/g, '$1')
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without)\s*\([^)]*\)/g, '')
    .replace(/\$\{?\w+\}?/g, '');
  const ids = bare.match(/[A-Za-z_:][A-Za-z0-9_:]*/g) ?? [];
  return [...new Set(ids.filter((id) => !PROMQL_WORDS.has(id)))];
}

const queries = (): { panel: string; expr: string }[] => [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr }))),
  ...dashboard.templating.list.filter((v) => v.type === 'query').map((v) => ({ panel: `variable ${v.name}`, expr: (v.query as { query: string }).query })),
];

describe('deploy/grafana/temp-inbox.json', () => {
  it("compiles as Grafana's Dashboard type (@grafana/schema)", () => {
    const virtual = `${ROOT}deploy/grafana/dashboard-check.ts`;
    const source = `import type { Dashboard } from '@grafana/schema';\nexport const dashboard: Dashboard = ${text};\n`;
    const options: ts.CompilerOptions = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: [], skipLibCheck: true };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version, ...rest) => (name === virtual ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === virtual || fileExists(name);
    const program = ts.createProgram([virtual], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(problems, []);
  });

  it('has what Grafana needs to draw it: a schemaVersion, a Prometheus datasource variable, panels placed on the grid with queries on it', () => {
    assert.ok(Number.isInteger(dashboard.schemaVersion) && dashboard.schemaVersion >= 36, `schemaVersion ${dashboard.schemaVersion}`);
    assert.match(dashboard.uid, /^[a-z0-9-]{1,40}$/);
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    assert.deepEqual([ds?.name, ds?.query], ['datasource', 'prometheus'], 'a datasource variable for Prometheus');
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'unique panel ids');
    const cells = new Map<string, string>();
    for (const p of dashboard.panels) {
      const { h, w, x, y } = p.gridPos;
      assert.ok([h, w, x, y].every(Number.isInteger) && h > 0 && w > 0 && x >= 0 && y >= 0 && x + w <= 24, `${p.title}: gridPos ${JSON.stringify(p.gridPos)}`);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          const other = cells.get(`${i},${j}`);
          assert.equal(other, undefined, `${p.title} overlaps ${other}`);
          cells.set(`${i},${j}`, p.title);
        }
      }
      if (p.type === 'row') continue;
      assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, `${p.title}: on the datasource variable`);
      assert.ok(p.targets && p.targets.length > 0, `${p.title}: has queries`);
      assert.equal(new Set(p.targets.map((t) => t.refId)).size, p.targets.length, `${p.title}: unique refIds`);
      for (const t of p.targets) {
        assert.deepEqual(t.datasource, p.datasource, `${p.title} ${t.refId}: on the datasource variable`);
        assert.ok(metricNames(t.expr).length > 0, `${p.title} ${t.refId}: reads a metric`);
      }
    }
  });

  describe('against the metrics of a running server', () => {
    let server: TestServer;
    let families: Map<string, string>;
    before(async () => {
      server = await startTestServer({ METRICS_TOKEN: TOKEN });
      // Some traffic, so that the histograms have their series.
      const a = await createAddress(server);
      await sendMail(server.smtpPort, { to: [a.address], message: message({ Subject: 'dashboard' }, 'x') });
      await request(server.httpUrl, '/api/mails?limit=5&offset=0', { jwt: a.jwt });
      const res = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200, res.text);
      families = new Map([...res.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    });
    after(async () => {
      await server?.close();
    });

    /** Whether /metrics exports `name`: a family, or a histogram's _bucket, _sum or _count. */
    const exported = (name: string) => families.has(name) || /_(?:bucket|sum|count)$/.test(name) && families.get(name.replace(/_(?:bucket|sum|count)$/, '')) === 'histogram';

    it('reads only metrics the server exports, in every expression', () => {
      assert.ok(families.size > 20, 'the scrape has the families');
      const unknown = queries().flatMap((q) => metricNames(q.expr).filter((name) => !exported(name)).map((name) => `${q.panel}: ${name}`));
      assert.deepEqual(unknown, []);
    });

    it("shows every metric of the service's own (the process's and Node's aside)", () => {
      const used = new Set(queries().flatMap((q) => metricNames(q.expr).map((n) => n.replace(/_(?:bucket|sum|count)$/, ''))));
      const own = [...families.keys()].filter((f) => !/^temp_inbox_(?:process|nodejs)_/.test(f));
      assert.ok(own.includes('temp_inbox_smtp_refusals_total') && own.includes('temp_inbox_mails_stored_total'), 'the refusals and the ingest are exported');
      assert.deepEqual(
        own.filter((f) => !used.has(f)),
        [],
        'every service metric has a panel',
      );
    });
  });
});

/** An expression as Grafana sends it: its variables filled in (every node, a one-minute rate window). */
const asGrafanaSends = (expr: string) => expr.replace(/\$__rate_interval/g, '1m').replace(/\$instance/g, '.*');

describe('deploy/grafana/temp-inbox.json in a real Prometheus', { skip: prometheusMissing() }, () => {
  let server: TestServer;
  let prometheus: RunningPrometheus;
  before(async () => {
    server = await startTestServer({ METRICS_TOKEN: TOKEN });
    const target = new URL(server.httpUrl).host;
    prometheus = await startPrometheus({ targets: [target], token: TOKEN });
    /** Until Prometheus answers `expr` with a series (it scrapes every second); a scrape that never works fails in 60 s, not never. */
    const until = async (expr: string) => {
      const end = Date.now() + 60_000;
      for (let answer = await prometheus.query(expr); (answer.data?.result.length ?? 0) === 0; answer = await prometheus.query(expr)) {
        if (Date.now() > end) assert.fail(`Prometheus had no series for ${expr} within 60 s: ${JSON.stringify(answer)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    // A first scrape before the traffic, so that its rates are seen to rise.
    await until('temp_inbox_mails_stored_total');
    // Traffic for the panels: mail stored, HTTP requests, a recipient refused.
    const a = await createAddress(server);
    for (let i = 0; i < 3; i++) await sendMail(server.smtpPort, { from: `s${i}@shop.example`, to: [a.address], message: message({ Subject: `m${i}` }, 'x') });
    await request(server.httpUrl, '/api/mails?limit=5&offset=0', { jwt: a.jwt });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.command('EHLO prometheus.test');
    await smtp.command('MAIL FROM:<x@shop.example>');
    assert.equal((await smtp.command(`RCPT TO:<nobody@${DOMAIN}>`)).code, 550);
    await smtp.quit();
    await until(
      'increase(temp_inbox_mails_stored_total[1m]) >= 3 and on() increase(temp_inbox_smtp_refusals_total{reason="unknown_recipient"}[1m]) > 0 ' +
        'and on() sum(rate(temp_inbox_http_request_duration_seconds_count[1m])) > 0',
    );
  });
  after(async () => {
    await prometheus?.stop();
    await server?.close();
  });

  it('answers every expression without an error', async () => {
    const failed: string[] = [];
    for (const q of queries().filter((q) => !q.panel.startsWith('variable '))) {
      const answer = await prometheus.query(asGrafanaSends(q.expr));
      if (answer.status !== 'success') failed.push(`${q.panel}: ${answer.error}`);
    }
    assert.deepEqual(failed, []);
  });

  it('shows the traffic: mails stored, refusals by reason, latency, webhooks, the store; the node variable lists the node', async () => {
    const resultsOf = async (metric: string) => {
      const q = queries().find((x) => metricNames(x.expr).includes(metric));
      assert.ok(q, `a panel reads ${metric}`);
      return (await prometheus.query(asGrafanaSends(q.expr))).data?.result as { metric: Record<string, string>; value: [number, string] }[];
    };
    const stored = await resultsOf('temp_inbox_mails_stored_total');
    assert.ok(Number(stored[0]?.value[1]) > 0, `mails stored per second > 0: ${JSON.stringify(stored)}`);
    const refusals = await resultsOf('temp_inbox_smtp_refusals_total');
    assert.ok(Number(refusals.find((r) => r.metric['reason'] === 'unknown_recipient')?.value[1]) > 0, `the refused recipient: ${JSON.stringify(refusals)}`);
    const latency = await resultsOf('temp_inbox_http_request_duration_seconds_bucket');
    assert.ok(latency.length > 0 && latency.every((r) => Number.isFinite(Number(r.value[1])) || r.value[1] === 'NaN'), JSON.stringify(latency));
    assert.ok((await resultsOf('temp_inbox_webhook_attempts_total')).length > 0, 'the webhook series');
    assert.deepEqual((await resultsOf('temp_inbox_store_info')).map((r) => r.metric['store']), ['sqlite']);
    assert.deepEqual(await prometheus.labelValues('instance', 'temp_inbox_store_info'), [new URL(server.httpUrl).host]);
  });
});
