// The JSON the server writes itself (GET /ui-config.json, the Mailpit- and MailHog-compatible
// answers) is what @temp-inbox/api's schemas say: each answer of a real server, with a real
// mail delivered over SMTP, checked against its schema, no field missing, none undeclared.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  MailhogMessage,
  MailhogMessageList,
  MailhogMessagesResponse,
  MailpitChaos,
  MailpitHeaders,
  MailpitInfo,
  MailpitMessage,
  MailpitMessagesResponse,
  MailpitTags,
  MailpitWebUi,
  path,
  routes,
  UiConfig,
} from '@temp-inbox/api';
import { request, startTestServer, type TestServer } from '../helpers/harness.js';

// TypeBox checks a format only once told what it is: RFC 3339 with a time, as the server writes it.
FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)));

const BOX = { user: 'schema-box', pass: 'schema-secret-1' };
const auth = { authorization: `Basic ${Buffer.from(`${BOX.user}:${BOX.pass}`).toString('base64')}` };

/** Fields of `value` that the schema's objects do not declare (TypeBox allows them unless told). */
function undeclared(schema: TSchema, value: unknown, at = '$'): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return schema['items'] ? value.flatMap((v, i) => undeclared(schema['items'] as TSchema, v, `${at}[${i}]`)) : [];
  const options = (schema['anyOf'] as TSchema[] | undefined)?.filter((s) => s['type'] === 'object');
  if (options?.length) return undeclared(options[0]!, value, at);
  const props = schema['properties'] as Record<string, TSchema> | undefined;
  if (!props) return [];
  return Object.entries(value).flatMap(([k, v]) => (props[k] ? undeclared(props[k], v, `${at}.${k}`) : [`${at}.${k}`]));
}

function assertFits(schema: TSchema, body: unknown, what: string): void {
  const errors = [...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`);
  assert.deepEqual(errors, [], `${what} does not fit its schema`);
  assert.deepEqual(undeclared(schema, body), [], `${what} has fields its schema lacks`);
}

describe('answer schemas: what the server writes is what @temp-inbox/api declares', () => {
  let server: TestServer;
  let id: string;
  const get = async (url: string, headers: Record<string, string> = auth) => {
    const res = await request(server.httpUrl, url, { headers });
    assert.equal(res.status, 200, `${url}: ${res.text}`);
    return JSON.parse(res.text) as unknown;
  };

  before(async () => {
    server = await startTestServer({ SANDBOXES: `${BOX.user}:${BOX.pass}` });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, auth: BOX });
    try {
      await transport.sendMail({
        from: 'Sender <sender@example.com>',
        to: 'someone@example.org',
        cc: 'other@example.org',
        subject: 'Schemas',
        text: 'Your code is 123456',
        html: '<p>Your code is <b>123456</b></p>',
        attachments: [{ filename: 'a.txt', content: 'attached' }],
      });
    } finally {
      transport.close();
    }
    const list = (await get(path(routes.mailpitMessages))) as { messages: { ID: string }[] };
    id = list.messages[0]!.ID;
  });
  after(async () => server?.close());

  it('GET /ui-config.json', async () => {
    assertFits(UiConfig, await get(path(routes.uiConfig), {}), 'ui-config');
  });

  it("Mailpit's answers", async () => {
    assertFits(MailpitMessagesResponse, await get(path(routes.mailpitMessages)), 'messages');
    assertFits(MailpitMessagesResponse, await get(`${path(routes.mailpitSearch)}?query=code`), 'search');
    assertFits(MailpitMessage, await get(path(routes.mailpitMessage, { id })), 'message');
    assertFits(MailpitHeaders, await get(path(routes.mailpitMessageHeaders, { id })), 'headers');
    assertFits(MailpitInfo, await get(path(routes.mailpitInfo)), 'info');
    assertFits(MailpitWebUi, await get(path(routes.mailpitWebui)), 'webui');
    assertFits(MailpitChaos, await get(path(routes.mailpitChaos)), 'chaos');
    assertFits(MailpitTags, await get(path(routes.mailpitTags)), 'tags');
  });

  it("MailHog's answers", async () => {
    const page = await get(path(routes.mailhogMessagesV2));
    assertFits(MailhogMessagesResponse, page, 'v2 messages');
    assert.equal((page as { items: unknown[] }).items.length, 1);
    assertFits(MailhogMessagesResponse, await get(`${path(routes.mailhogSearch)}?kind=containing&query=code`), 'v2 search');
    assertFits(MailhogMessageList, await get(path(routes.mailhogMessages)), 'v1 messages');
    assertFits(MailhogMessage, await get(path(routes.mailhogMessage, { id })), 'v1 message');
  });
});
