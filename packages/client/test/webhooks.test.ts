// inbox.webhook against the whole service (startTempInbox: real HTTP, real SMTP, SQLite)
// and a real receiver on this machine (WEBHOOK_ALLOW_PRIVATE, as for an intranet): set,
// get, a signed delivery of a real mail, the attempts, refusal of a bad URL, another
// inbox's isolation, and removal.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { MailReceivedEvent } from '@temp-inbox/api';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { startService } from './helpers/service.js';
import { TempInboxClient, TempInboxError } from '../src/index.js';
import { send } from './helpers/mail.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

describe('SDK: an inbox webhook', { timeout: 60_000 }, () => {
  let server: TempInbox;
  let client: TempInboxClient;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  const waiters: (() => void)[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
        waiters.splice(0).forEach((w) => w());
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/mail`;
    server = await startService({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    client = new TempInboxClient({ baseUrl: server.url });
  });
  after(async () => {
    await server?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('none at first; set, read back without its secret, a signed delivery of a real mail, its attempts, removed', async () => {
    await using inbox = await client.createInbox();
    assert.equal(await inbox.webhook.get(), undefined);
    assert.equal(await inbox.webhook.remove(), false, 'nothing to remove');

    const before = Date.now();
    const created = await inbox.webhook.set(receiverUrl);
    assert.equal(created.url, receiverUrl);
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.ok(created.createdAt instanceof Date && created.createdAt.getTime() >= before - 1000 && created.createdAt.getTime() <= Date.now() + 1000);
    assert.deepEqual(await inbox.webhook.get(), { url: receiverUrl, createdAt: created.createdAt });

    const arrived = new Promise<void>((resolve) => waiters.push(resolve));
    await send(server, { to: inbox.address, subject: 'Hooked', text: 'Your code is 480213' });
    await arrived;
    const post = received.at(-1)!;
    // Standard Webhooks: the signature verifies with the secret, and the body is the mail as listed.
    const event = new Webhook(created.secret).verify(post.body, post.headers as Record<string, string>) as MailReceivedEvent;
    assert.equal(event.type, 'mail.received');
    assert.equal(event.data.address, inbox.address);
    const { mails } = await inbox.list();
    assert.equal(event.data.uuid, mails[0]!.uuid);
    assert.equal(JSON.parse(event.data.metadata).subject, 'Hooked');
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(post.body, post.headers as Record<string, string>), 'another secret does not verify');

    // The attempt is recorded once the receiver's answer is in.
    let attempts = await inbox.webhook.deliveries();
    for (const deadline = Date.now() + 10_000; attempts.length === 0 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
      attempts = await inbox.webhook.deliveries();
    }
    assert.equal(attempts.length, 1);
    const [a] = attempts;
    assert.deepEqual(
      { webhookId: a!.webhookId, mailUuid: a!.mailUuid, url: a!.url, attempt: a!.attempt, outcome: a!.outcome, status: a!.status, error: a!.error, nextAttemptAt: a!.nextAttemptAt },
      { webhookId: post.headers['webhook-id'], mailUuid: mails[0]!.uuid, url: receiverUrl, attempt: 1, outcome: 'delivered', status: 204, error: null, nextAttemptAt: null },
    );
    assert.ok(a!.at instanceof Date && Number.isInteger(a!.durationMs) && a!.durationMs >= 0);
    assert.equal((await inbox.webhook.deliveries({ limit: 1 })).length, 1);

    assert.equal(await inbox.webhook.remove(), true);
    assert.equal(await inbox.webhook.get(), undefined);
    assert.deepEqual(await inbox.webhook.deliveries(), [], 'the record of attempts goes with it');
  });

  it('a new secret with every set; another inbox sees none of it', async () => {
    await using inbox = await client.createInbox();
    await using other = await client.createInbox();
    const first = await inbox.webhook.set(receiverUrl);
    const second = await inbox.webhook.set(`${receiverUrl}?again=1`);
    assert.notEqual(second.secret, first.secret);
    assert.equal((await inbox.webhook.get())?.url, `${receiverUrl}?again=1`);
    assert.equal(await other.webhook.get(), undefined);
    assert.deepEqual(await other.webhook.deliveries(), []);
    assert.equal(await other.webhook.remove(), false);
    assert.equal((await inbox.webhook.get())?.url, `${receiverUrl}?again=1`, "the other inbox's remove left it alone");
  });

  it('refusals arrive as TempInboxError with the service status and sentence', async () => {
    await using inbox = await client.createInbox();
    for (const url of ['ftp://127.0.0.1/x', 'http://user:secret@127.0.0.1/x', 'not a url']) {
      await assert.rejects(inbox.webhook.set(url), (err: unknown) => err instanceof TempInboxError && err.status === 400 && err.message.length > 0, url);
    }
    await assert.rejects(inbox.webhook.deliveries({ limit: 0 }), (err: unknown) => err instanceof TempInboxError && err.status === 400);
    await assert.rejects(inbox.webhook.deliveries({ limit: 101 }), (err: unknown) => err instanceof TempInboxError && err.status === 400);
    const gone = await client.createInbox();
    await gone.delete();
    await assert.rejects(gone.webhook.get(), (err: unknown) => err instanceof TempInboxError && err.status === 401, 'a deleted inbox is not "no webhook"');
  });
});
