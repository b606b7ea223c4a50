// The one storage contract every backend must pass (after Inbucket's StoreSuite):
// a table of cases, each run against a fresh store from the backend's factory.
// The SQLite backend is the reference: these cases pin its observable semantics.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { AddressRecord, MailBody, MailSummary, NewMail, Store } from '../../src/storage/store.js';
import { PART_BYTES, PartsGoneError } from '../../src/storage/parts.js';
import { address, newMail, T0 } from './store-fixtures.js';
import { WEBHOOK_CASES } from './webhook-store-contract.js';
import { SANDBOX_CASES } from './sandbox-store-contract.js';
import { REPORT_SUMMARY_CASES } from './report-summary-store-contract.js';
import { TOMBSTONE_CASES } from './tombstone-store-contract.js';
import { REFUSAL_CASES } from './refusal-store-contract.js';

export type StoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>;

type Case = [name: string, run: (store: Store) => Promise<void>];

/** With `skip` (a reason), every case is registered as skipped and the factory never runs. */
export function storeContract(name: string, factory: StoreFactory, opts: { skip?: string | false } = {}): void {
  const skip = opts.skip || false;
  describe(`Store contract: ${name}`, () => {
    let current: { store: Store; cleanup: () => Promise<void> } | undefined;
    beforeEach(async () => {
      current = await factory();
    });
    afterEach(async () => {
      const c = current;
      current = undefined;
      if (c) await c.cleanup();
    });
    for (const [caseName, run] of [...CASES, ...WEBHOOK_CASES, ...SANDBOX_CASES, ...REPORT_SUMMARY_CASES, ...TOMBSTONE_CASES, ...REFUSAL_CASES]) {
      it(caseName, { skip }, async () => {
        assert.ok(current, 'the factory did not produce a store');
        await run(current.store);
      });
    }
  });
}

// ---------------------------------------------------------------------------
// Helpers

export { newMail };

/** After any real data (year 2096): cases that list a whole store use it, so they hold in a store that has data already. */
const TF = 4_000_000_000_000;

function summaryOf(m: NewMail, id: number): MailSummary {
  return { id, uuid: m.uuid, source: m.source, address: m.address, metadata: m.metadata, messageId: m.messageId, createdAt: m.createdAt, seen: false };
}

/** Inserts one mail per timestamp, one call each, and returns them with their ids. */
async function mailsAt(store: Store, to: AddressRecord, times: number[]): Promise<{ mail: NewMail; id: number }[]> {
  const out: { mail: NewMail; id: number }[] = [];
  for (const t of times) {
    const mail = newMail(to, t);
    const [id] = await store.insertMails([mail]);
    assert.equal(typeof id, 'number');
    out.push({ mail, id: id! });
  }
  return out;
}

const uuidsOf = (r: { results: MailSummary[] }) => r.results.map((m) => m.uuid);

async function members(store: Store, sessionId: string): Promise<string[]> {
  return (await store.listSessionAddresses(sessionId)).map((m) => m.address);
}

// ---------------------------------------------------------------------------
// Cases

const CASES: Case[] = [
  [
    'getMailHead: a live mail of the address without its message, with the degraded view kept for it; keepDegradedView replaces it and goes with the mail',
    async (store) => {
      const a = await address(store, 'parsed@example.com');
      const b = await address(store, 'someone@example.com');
      const { mail, id } = (await mailsAt(store, a, [T0 + 1]))[0]!;
      assert.deepEqual(await store.getMailHead(a.id, mail.uuid), { mail: summaryOf(mail, id), degradedView: undefined, reportSummary: undefined }, 'nothing kept yet');
      assert.equal(await store.getMailHead(b.id, mail.uuid), undefined, "another address's mail");
      assert.equal(await store.getMailHead(a.id, randomUUID()), undefined, 'an unknown uuid');
      await store.keepDegradedView(id, Buffer.from('{"degraded":true}'));
      assert.equal((await store.getMailHead(a.id, mail.uuid))!.degradedView!.toString(), '{"degraded":true}');
      await store.keepDegradedView(id, Buffer.from('{"degraded":true,"n":2}'));
      assert.equal((await store.getMailHead(a.id, mail.uuid))!.degradedView!.toString(), '{"degraded":true,"n":2}', 'replaced');
      // The next mail's id, most likely: nothing kept for a mail that is not there yet.
      await store.keepDegradedView(id + 1, Buffer.from('{}'));
      const next = (await mailsAt(store, a, [T0 + 2]))[0]!.mail;
      assert.equal((await store.getMailHead(a.id, next.uuid))!.degradedView, undefined, 'nothing kept before the mail was');
      assert.equal(await store.softDeleteMail(a.id, mail.uuid), true);
      assert.equal(await store.getMailHead(a.id, mail.uuid), undefined, 'a deleted mail has no head');
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      await store.keepDegradedView(id, Buffer.from('{}'));
    },
  ],
  [
    'searchMails: every word as the start of a word of the search text, the address own live mail only, newest first',
    async (store) => {
      const a = await address(store, 'searcher@example.com');
      const b = await address(store, 'other@example.com');
      const texts = [
        'Welcome aboard\nAlice <alice@shop.example>\nYour verification code is 482913. Bienvenue à bord, café compris.',
        'Your order has shipped\nshipping@shop.example\nTracking number ZX-99 for the parcel.',
        'Newsletter\nnews@list.example\nNothing about orders here.',
      ];
      const mails = texts.map((t, i) => newMail(a, T0 + i, { searchText: t }));
      await store.insertMails(mails);
      await store.insertMails([newMail(b, T0 + 10, { searchText: 'Your order has shipped to someone else' }), newMail(a, T0 + 11)]);
      const uuids = async (query: string, limit = 10, offset = 0) => {
        const r = await store.searchMails(a.id, query, limit, offset);
        return { count: r.count, uuids: r.results.map((m) => m.uuid) };
      };
      assert.deepEqual(await uuids('verification'), { count: 1, uuids: [mails[0]!.uuid] }, 'a word only the body has');
      assert.deepEqual(await uuids('ORDER'), { count: 2, uuids: [mails[2]!.uuid, mails[1]!.uuid] }, 'prefix, any case, newest first; not the other address');
      assert.deepEqual(await uuids('order shipped'), { count: 1, uuids: [mails[1]!.uuid] }, 'every word must match');
      assert.deepEqual(await uuids('shop.example'), { count: 2, uuids: [mails[1]!.uuid, mails[0]!.uuid] }, 'punctuation separates words');
      assert.deepEqual(await uuids('cafe'), { count: 1, uuids: [mails[0]!.uuid] }, 'accents are ignored');
      assert.deepEqual(await uuids('482'), { count: 1, uuids: [mails[0]!.uuid] });
      assert.deepEqual(await uuids('order', 1, 1), { count: 2, uuids: [mails[1]!.uuid] }, 'paged, with the full count');
      for (const hostile of ['*', 'NEAR(a b)', "o'brien", 'a AND OR NOT', '((', '\\', ':*', '&|!', '', '"NEAR(a b)"', 'from:\'x', "subject:o'brien", '-"a*" -:* -from:%_']) {
        const r = await store.searchMails(a.id, hostile, 10, 0);
        assert.ok(Array.isArray(r.results), `query ${JSON.stringify(hostile)} is words, never syntax`);
      }
      assert.deepEqual(await uuids('...'), { count: 0, uuids: [] });
      assert.equal((await store.searchMails(b.id, 'verification', 10, 0)).count, 0, 'another address never finds it');
      // Gone when soft-deleted, and after its address is deleted.
      await store.softDeleteMail(a.id, mails[0]!.uuid);
      assert.deepEqual(await uuids('verification'), { count: 0, uuids: [] });
      await store.deleteAddress(b.id);
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      assert.deepEqual(await uuids('order'), { count: 2, uuids: [mails[2]!.uuid, mails[1]!.uuid] });
    },
  ],
  [
    "searchMails: an address's words never match another's, even where their ids and words line up; counts leave deleted mail out",
    async (store) => {
      // Two addresses where one id starts the other's (1 and 12, 5 and 50, …): the index
      // keeps each address's words apart (z<id>z<word>), so "2" of the first never
      // matches "abc" of the second, nor the reverse.
      const a = await address(store, 'ids-a@example.com');
      let b: AddressRecord | undefined;
      for (let i = 0; i < 200 && !b; i++) {
        const next = await address(store, `ids-${i}@example.com`);
        if (String(next.id).startsWith(String(a.id))) b = next;
      }
      assert.ok(b, `an address whose id starts with ${a.id}`);
      const mineA = newMail(a, T0 + 1, { searchText: '2abcd 2 ticket' });
      const mineB = newMail(b, T0 + 2, { searchText: 'abcd ticket' });
      await store.insertMails([mineA, mineB]);
      const found = async (who: AddressRecord, q: string) => (await store.searchMails(who.id, q, 10, 0)).results.map((m) => m.uuid);
      assert.deepEqual(await found(a, '2ab'), [mineA.uuid]);
      assert.deepEqual(await found(a, '2abcd'), [mineA.uuid]);
      assert.deepEqual(await found(a, '2'), [mineA.uuid], 'a short word, whole');
      assert.deepEqual(await found(a, 'abcd'), [], 'not the other address\'s word');
      assert.deepEqual(await found(b, 'abcd'), [mineB.uuid]);
      assert.deepEqual(await found(b, '2'), []);
      assert.deepEqual(await found(b, '2ab'), []);
      assert.deepEqual(await found(b, String(b.id).slice(String(a.id).length) + 'abcd'), [], 'the id is never part of a word');
      // Counts past the first page (where the store counts apart from the page) leave deleted mail out.
      const many = Array.from({ length: 5 }, (_, i) => newMail(a, T0 + 10 + i, { searchText: 'ticket number ' + i }));
      await store.insertMails(many);
      const page = async (q: string) => {
        const r = await store.searchMails(a.id, q, 2, 0);
        return { count: r.count, uuids: r.results.map((m) => m.uuid) };
      };
      assert.deepEqual(await page('ticket'), { count: 6, uuids: [many[4]!.uuid, many[3]!.uuid] }, 'newest first');
      await store.softDeleteMail(a.id, many[4]!.uuid);
      assert.deepEqual(await page('ticket'), { count: 5, uuids: [many[3]!.uuid, many[2]!.uuid] });
      await store.clearMails(a.id);
      assert.deepEqual(await page('ticket'), { count: 0, uuids: [] });
      assert.deepEqual(await found(b, 'ticket'), [mineB.uuid], 'the other address keeps its mail');
    },
  ],
  [
    "searchMails: Mailpit's filters cc: bcc: (envelope recipients To and Cc do not name) reply-to: message-id: tag: is:tagged filename: larger: smaller:, to: in the envelope too; mail without the fields matches none of them",
    async (store) => {
      const a = await address(store, 'mailpit-filters@example.com');
      const box = (address: string, name = '') => ({ name, address });
      const meta = (extra: Record<string, unknown>) => JSON.stringify({ subject: 's', from: box('f@shop.example'), to: [], attachments: [], size: 100, ...extra });
      const [m1, m2, m3] = [
        newMail(a, T0 + 1, {
          messageId: '<Order-1@Shop.Example>',
          metadata: meta({ to: [box('alice@inbox.example', 'Alice')], cc: [box('carol@inbox.example', 'Carol Cc')], reply_to: [box('help@shop.example')], size: 2_000_000, attachments: [{ id: '0', filename: 'Invoice-2024.PDF' }] }),
          envelope: { from: 'f@shop.example', to: ['alice@inbox.example', 'CAROL@inbox.example', 'hidden@secret.example'] },
        }),
        newMail(a, T0 + 2, { messageId: '<two@shop.example>', metadata: meta({ to: [box('dave@inbox.example')], cc: [], reply_to: [], size: 400_000 }), envelope: { from: '', to: ['dave@inbox.example'] } }),
        // Stored before Cc, Reply-To and envelopes were kept.
        newMail(a, T0 + 3, { messageId: '', metadata: JSON.stringify({ subject: 'old', from: box('o@old.example'), to: [box('erin@inbox.example')], attachments: [] }) }),
      ] as [NewMail, NewMail, NewMail];
      await store.insertMails([m1, m2, m3]);
      await store.setMailTags(a.id, [m1.uuid], ['Signup', 'urgent one']);
      await store.setMailTags(a.id, [m2.uuid], ['signup']);
      const names = new Map([m1, m2, m3].map((m, i) => [m.uuid, `m${i + 1}`]));
      const found = async (q: string) => (await store.searchMails(a.id, q, 10, 0)).results.map((m) => names.get(m.uuid));
      const cases: [string, string[]][] = [
        ['cc:carol', ['m1']],
        ['cc:"carol cc"', ['m1']],
        ['-cc:carol', ['m3', 'm2']],
        ['bcc:hidden', ['m1']],
        ['bcc:secret.example', ['m1']],
        ['bcc:carol', []],
        ['bcc:alice', []],
        ['bcc:dave', []],
        ['-bcc:hidden', ['m3', 'm2']],
        ['to:hidden@secret.example', ['m1']],
        ['to:erin', ['m3']],
        ['reply-to:help@shop', ['m1']],
        ['message-id:order-1@shop.example', ['m1']],
        ['message-id:<Order-1@Shop.Example>', ['m1']],
        ['message-id:order-1', []],
        ['tag:signup', ['m2', 'm1']],
        ['tag:SIGNUP', ['m2', 'm1']],
        ['tag:"urgent one"', ['m1']],
        ['tag:urgent', []],
        ['-tag:signup', ['m3']],
        ['is:tagged', ['m2', 'm1']],
        ['-is:tagged', ['m3']],
        ['filename:invoice', ['m1']],
        ['filename:.pdf', ['m1']],
        ['-filename:invoice', ['m3', 'm2']],
        ['larger:1M', ['m1']],
        ['larger:400K', ['m2', 'm1']],
        ['larger:400001', ['m1']],
        ['smaller:1MB', ['m3', 'm2']],
        ['smaller:100', ['m3']],
        ['larger:1.9MiB', ['m1']],
        ['larger:2MiB', []],
        ['tag:signup larger:1M cc:carol bcc:hidden filename:pdf message-id:order-1@shop.example is:tagged to:alice', ['m1']],
      ];
      for (const [q, want] of cases) assert.deepEqual(await found(q), want, q);
      for (const bad of ['larger:big', 'smaller:1T', 'addressed:alice', 'tag:', 'larger:1M smaller:2M a b c d e f g']) {
        await assert.rejects(store.searchMails(a.id, bad, 10, 0), (err: { code?: string; message?: string }) => err.code === 'bad_request' && typeof err.message === 'string', bad);
      }
    },
  ],
  [
    'searchMails: the syntax (from: to: subject: has:attachment is:read is:unread before: after:, quoted phrases, - to negate), short words whole; bad syntax is a bad_request',
    async (store) => {
      const a = await address(store, 'syntax@example.com');
      const day = (d: string, h = 0) => Date.parse(`${d}T00:00:00Z`) + h * 3_600_000;
      const meta = (subject: string, from: [string, string], to: [string, string][], extra: Record<string, unknown> = {}) =>
        JSON.stringify({ subject, from: { name: from[0], address: from[1] }, to: to.map(([name, addr]) => ({ name, address: addr })), attachments: [], ...extra });
      const [m1, m2, m3, m4] = [
        newMail(a, day('2024-05-01', 10), {
          metadata: meta('Your order shipped', ['Shop', 'orders@shop.example'], [['Alice', 'alice@inbox.example']], { attachments: [{ id: '0', filename: 'label.pdf' }] }),
          searchText: 'Your order shipped Shop orders@shop.example tracking parcel',
        }),
        newMail(a, day('2024-05-02', 23.9), {
          metadata: meta('Verification code', ['Bank', 'noreply@bank.example'], [['', 'someone@inbox.example']], { delivered_to: 'alice+bank@inbox.example' }),
          searchText: 'Verification code 123456 for your bank account',
        }),
        newMail(a, day('2024-05-03'), { metadata: meta('Weekly newsletter', ['News', 'news@list.example'], [['Bob', 'bob@inbox.example']]), searchText: 'Weekly newsletter about your order history' }),
        newMail(a, day('2024-05-04'), { metadata: meta('Plain', ['', 'x@plain.example'], []) }),
      ] as [NewMail, NewMail, NewMail, NewMail];
      await store.insertMails([m1, m2, m3, m4]);
      await store.insertMails([newMail(await address(store, 'syntax-other@example.com'), day('2024-05-02'), { metadata: meta('Your order shipped', ['Shop', 'orders@shop.example'], []), searchText: 'your order' })]);
      await store.setSeen(a.id, m1.uuid, true);
      const names = new Map([m1, m2, m3, m4].map((m, i) => [m.uuid, `m${i + 1}`]));
      const found = async (q: string) => (await store.searchMails(a.id, q, 10, 0)).results.map((m) => names.get(m.uuid));
      const cases: [string, string[]][] = [
        ['from:shop', ['m1']],
        ['from:BANK', ['m2']],
        ['-from:shop', ['m4', 'm3', 'm2']],
        ['to:alice', ['m2', 'm1']],
        ['to:bob', ['m3']],
        ['to:alice+bank', ['m2']],
        ['subject:"order shipped"', ['m1']],
        ['subject:verif', ['m2']],
        ['-subject:"weekly"', ['m4', 'm2', 'm1']],
        ['has:attachment', ['m1']],
        ['-has:attachment', ['m4', 'm3', 'm2']],
        ['is:read', ['m1']],
        ['is:unread', ['m4', 'm3', 'm2']],
        ['-is:unread', ['m1']],
        ['before:2024-05-02', ['m1']],
        ['after:2024-05-02', ['m4', 'm3', 'm2']],
        ['after:2024-05-02 before:2024-05-03', ['m2']],
        ['-before:2024-05-04', ['m4']],
        ['your', ['m3', 'm2', 'm1']],
        ['your -order', ['m2']],
        ['"your order"', ['m3', 'm1']],
        ['ord', ['m3', 'm1']],
        ['"ord"', []],
        ['or', []],
        ['12', []],
        ['-"order history"', ['m4', 'm2', 'm1']],
        ['-order -bank', ['m4']],
        ['order -from:shop', ['m3']],
        ['ORDER From:Shop HAS:attachment Is:Read before:2024-05-02', ['m1']],
        ['-order is:unread', ['m4', 'm2']],
      ];
      for (const [q, want] of cases) assert.deepEqual(await found(q), want, q);
      const paged = await store.searchMails(a.id, 'your', 1, 1);
      assert.deepEqual({ count: paged.count, uuids: paged.results.map((m) => names.get(m.uuid)) }, { count: 3, uuids: ['m2'] }, 'paged, with the full count');
      const filtered = await store.searchMails(a.id, 'is:unread', 2, 0);
      assert.equal(filtered.count, 3, 'a count past a full page of fields');
      assert.equal((await store.searchMails(a.id, 'your is:unread', 1, 0)).count, 2, 'a count of words and fields past a full page');
      for (const bad of ['"unclosed', 'is:starred', 'has:wings', 'before:2024-02-30', 'after:May', 'from:', 'one two three four five six seven eight nine']) {
        await assert.rejects(store.searchMails(a.id, bad, 10, 0), (err: { code?: string; message?: string }) => err.code === 'bad_request' && typeof err.message === 'string', bad);
      }
    },
  ],
  [
    'an unclaimed address (catch-all) is claimed exactly once; a claimed or unknown one never',
    async (store) => {
      const open = await store.createAddress('open@example.com', T0, { unclaimed: true });
      assert.ok(open);
      const normal = await address(store, 'normal@example.com');
      assert.equal(await store.createAddress('open@example.com', T0 + 1), undefined, 'the name is taken, claimed or not');
      assert.deepEqual(await store.claimAddress('open@example.com'), open);
      assert.equal(await store.claimAddress('open@example.com'), undefined, 'a second claim');
      assert.equal(await store.claimAddress(normal.address), undefined, 'an address created by its owner');
      assert.equal(await store.claimAddress('nobody@example.com'), undefined);
      assert.deepEqual(await store.findAddress('open@example.com'), open, 'claiming changes nothing else');
      // Claims racing for one name: one wins.
      await store.createAddress('race@example.com', T0, { unclaimed: true });
      const claims = await Promise.all(Array.from({ length: 5 }, () => store.claimAddress('race@example.com')));
      assert.equal(claims.filter(Boolean).length, 1);
    },
  ],
  [
    'mails of one delivery share one body: each reads as its own trace + the body, and survives the others going',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      const c = await address(store, 'carol@example.com');
      const body: MailBody = { raw: Buffer.from('Subject: shared\r\n\r\nonce\r\n', 'latin1'), attachments: [Buffer.from('att-0'), Buffer.from([0, 255, 1])] };
      const trace = (who: string) => Buffer.from(`Received: for <${who}>\r\n`, 'latin1');
      const mails = [a, b, c].map((to, i) => newMail(to, T0 + i, { trace: trace(to.address), body }));
      const ids = await store.insertMails(mails);
      assert.equal(new Set(ids).size, 3);
      for (const [i, to] of [a, b, c].entries()) {
        const got = await store.getMail(to.id, mails[i]!.uuid);
        assert.ok(got);
        assert.ok(got.raw.equals(Buffer.concat([trace(to.address), body.raw])), `raw of ${to.address}`);
      }
      // The body lives while any mail refers to it: soft delete + purge one, delete another's address.
      assert.equal(await store.softDeleteMail(a.id, mails[0]!.uuid), true);
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      assert.equal(await store.deleteAddress(b.id), true);
      const left = await store.getMail(c.id, mails[2]!.uuid);
      assert.ok(left && left.raw.equals(Buffer.concat([trace(c.address), body.raw])));
      assert.deepEqual(await store.getAttachment(c.id, mails[2]!.uuid, 1), { metadata: mails[2]!.metadata, content: Buffer.from([0, 255, 1]), legacy: false });
    },
  ],
  [
    'getAttachment returns the metadata and the stored bytes by index, and undefined for unknown, foreign or deleted mail',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      const m = newMail(a, T0, { body: { raw: Buffer.from('x'), attachments: [Buffer.from('first'), Buffer.alloc(0), Buffer.from('third')] } });
      await store.insertMails([m]);
      const at = (content: Buffer | null) => ({ metadata: m.metadata, content, legacy: false });
      assert.deepEqual(await store.getAttachment(a.id, m.uuid, 0), at(Buffer.from('first')));
      assert.deepEqual(await store.getAttachment(a.id, m.uuid, 1), at(Buffer.alloc(0)));
      assert.deepEqual(await store.getAttachment(a.id, m.uuid, 2), at(Buffer.from('third')));
      assert.deepEqual(await store.getAttachment(a.id, m.uuid, 3), at(null));
      assert.equal(await store.getAttachment(b.id, m.uuid, 0), undefined, 'another address');
      assert.equal(await store.getAttachment(a.id, randomUUID(), 0), undefined, 'unknown mail');
      await store.softDeleteMail(a.id, m.uuid);
      assert.equal(await store.getAttachment(a.id, m.uuid, 0), undefined, 'deleted mail');
    },
  ],
  [
    'getAttachment round-trips large attachments byte for byte, each with its own bytes, and they go with their mail',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const bytes = (n: number, seed: number) => {
        const b = Buffer.alloc(n);
        for (let i = 0; i < n; i++) b[i] = (i * seed + (i >> 11)) & 0xff;
        return b;
      };
      // Across part boundaries of a chunked store (512 KiB): exactly two parts, a part and a byte, one byte.
      const attachments = [bytes(1024 * 1024, 131), bytes(512 * 1024 + 1, 61), bytes(1, 7), bytes(2 * 1024 * 1024 + 333, 29)];
      const m = newMail(a, T0, { body: { raw: Buffer.from('x'), attachments } });
      await store.insertMails([m]);
      for (const [i, want] of attachments.entries()) {
        const got = await store.getAttachment(a.id, m.uuid, i);
        assert.ok(got?.content, `attachment ${i}`);
        assert.equal(got.content.length, want.length, `attachment ${i} length`);
        assert.ok(got.content.equals(want), `attachment ${i} is byte-exact`);
      }
      assert.equal((await store.getAttachment(a.id, m.uuid, attachments.length))?.content, null);
      await store.softDeleteMail(a.id, m.uuid);
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      assert.equal(await store.getAttachment(a.id, m.uuid, 0), undefined);
    },
  ],
  [
    'addressUsage counts the live mails of the address and their whole size (trace + body)',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      assert.deepEqual(await store.addressUsage(a.id), { count: 0, bytes: 0 });
      const m1 = newMail(a, T0, { trace: Buffer.alloc(10), raw: Buffer.alloc(100) });
      const m2 = newMail(a, T0 + 1, { trace: Buffer.alloc(20), raw: Buffer.alloc(1000) });
      await store.insertMails([m1]);
      await store.insertMails([m2, newMail(b, T0, { raw: Buffer.alloc(7) })]);
      assert.deepEqual(await store.addressUsage(a.id), { count: 2, bytes: 1130 });
      await store.softDeleteMail(a.id, m2.uuid);
      assert.deepEqual(await store.addressUsage(a.id), { count: 1, bytes: 110 });
      await store.clearMails(a.id);
      assert.deepEqual(await store.addressUsage(a.id), { count: 0, bytes: 0 });
      assert.equal((await store.addressUsage(b.id)).count, 1);
    },
  ],
  // --- the operators' admin ---------------------------------------------------
  [
    'listAddresses: newest first, by a substring of the name (no wildcards), paged, with the live mail count, size and newest arrival',
    async (store) => {
      // Later than any real data and under names of their own, so a store that already holds
      // addresses (one restored from a backup: backup.test.ts) changes nothing below.
      const before = (await store.listAddresses('', 1, 0)).count;
      const tag = `c${randomUUID().slice(0, 8)}`;
      const alpha = await address(store, `alpha@${tag}.example.com`, TF);
      const beta = await address(store, `beta@${tag}.example.com`, TF + 1);
      const open = await store.createAddress(`x_y%z@${tag}.other.example`, TF + 2, { unclaimed: true });
      assert.ok(open);
      const m1 = newMail(beta, TF + 10, { trace: Buffer.alloc(5), raw: Buffer.alloc(100) });
      const m2 = newMail(beta, TF + 20, { raw: Buffer.alloc(50) });
      const m3 = newMail(beta, TF + 30, { raw: Buffer.alloc(7) });
      await store.insertMails([m1]);
      await store.insertMails([m2, m3, newMail(alpha, TF + 5, { raw: Buffer.alloc(1) })]);
      await store.softDeleteMail(beta.id, m3.uuid);
      const all = await store.listAddresses('', 3, 0);
      assert.equal(all.count, before + 3);
      assert.deepEqual(all.results, [
        { ...open, unclaimed: true, mails: 0, bytes: 0, lastMailAt: null },
        { ...beta, unclaimed: false, mails: 2, bytes: 155, lastMailAt: TF + 20 },
        { ...alpha, unclaimed: false, mails: 1, bytes: 1, lastMailAt: TF + 5 },
      ]);
      assert.deepEqual((await store.listAddresses(`${tag}.example.com`, 1, 1)), { results: [all.results[2]], count: 2 }, 'paged, with the count of matches');
      assert.deepEqual((await store.listAddresses(`ta@${tag}`, 10, 0)).results.map((a) => a.id), [beta.id]);
      assert.deepEqual((await store.listAddresses('_y%', 10, 0)).results.map((a) => a.id), [open.id], '_ and % are characters');
      assert.deepEqual(await store.listAddresses('%', 10, 0), { results: [all.results[0]], count: 1 });
      assert.deepEqual(await store.listAddresses(`nobody${tag}`, 10, 0), { results: [], count: 0 });
      assert.deepEqual(await store.listAddresses(tag, 10, 5), { results: [], count: 3 }, 'past the end');
      await store.deleteAddress(beta.id);
      assert.deepEqual((await store.listAddresses(tag, 10, 0)).results.map((a) => a.id), [open.id, alpha.id]);
    },
  ],
  [
    'blocks: one per kind and value, listed newest first, removed by id (never reused); the version moves with every change',
    async (store) => {
      const versions = [await store.blocksVersion()];
      const a = await store.addBlock({ kind: 'sender', value: 'bad@spam.example', note: 'first', createdAt: T0 });
      assert.ok(a);
      assert.deepEqual(a, { id: a.id, kind: 'sender', value: 'bad@spam.example', note: 'first', createdAt: T0 });
      versions.push(await store.blocksVersion());
      const b = await store.addBlock({ kind: 'domain', value: 'bad@spam.example', note: '', createdAt: T0 + 1 });
      assert.ok(b, 'the same value of another kind is another block');
      const c = await store.addBlock({ kind: 'ip', value: '192.0.2.0/24', note: '', createdAt: T0 + 2 });
      assert.ok(c);
      versions.push(await store.blocksVersion());
      assert.equal(await store.addBlock({ kind: 'sender', value: 'bad@spam.example', note: 'again', createdAt: T0 + 3 }), undefined, 'already blocked');
      assert.equal(await store.blocksVersion(), versions.at(-1), 'nothing changed');
      assert.deepEqual(await store.listBlocks(), [c, b, a]);
      assert.equal(await store.deleteBlock(b.id), true);
      versions.push(await store.blocksVersion());
      assert.equal(await store.deleteBlock(b.id), false);
      assert.equal(await store.deleteBlock(b.id + 1000), false);
      assert.equal(await store.blocksVersion(), versions.at(-1), 'nothing changed');
      // A removed block's value can be blocked again, under a new id.
      const d = await store.addBlock({ kind: 'ip', value: '192.0.2.0/24', note: '', createdAt: T0 + 4 });
      assert.equal(d, undefined);
      assert.equal(await store.deleteBlock(c.id), true);
      const e = await store.addBlock({ kind: 'ip', value: '192.0.2.0/24', note: '', createdAt: T0 + 5 });
      assert.ok(e && e.id > c.id, 'ids are never reused');
      versions.push(await store.blocksVersion());
      assert.deepEqual(await store.listBlocks(), [e, a]);
      assert.equal(new Set(versions).size, versions.length, `every change moved the version: ${versions.join(', ')}`);
    },
  ],
  [
    'mailsPerDay counts every stored mail on its UTC day at delivery, and deleting or purging mail takes nothing back',
    async (store) => {
      const day = Math.floor(T0 / 86_400_000);
      const start = day * 86_400_000;
      const a = await address(store, 'a@example.com', start);
      const b = await address(store, 'b@example.com', start);
      // Only the days around T0 are compared: a store restored from a backup has mail of its own, years later.
      const near = async (since: number) => (await store.mailsPerDay(since)).filter((d) => d.day < day + 10);
      assert.deepEqual(await near(day - 10), []);
      await store.insertMails([newMail(a, start - 1), newMail(a, start)]);
      await store.insertMails([newMail(a, start + 86_400_000 - 1), newMail(b, start + 5)]);
      await store.insertMails([newMail(b, start + 2 * 86_400_000)]);
      const counted = [
        { day: day - 1, mails: 1 },
        { day, mails: 3 },
        { day: day + 2, mails: 1 },
      ];
      assert.deepEqual(await near(day - 10), counted);
      assert.deepEqual(await near(day), counted.slice(1), 'from that day on');
      await store.clearMails(a.id);
      await store.deleteAddress(b.id);
      await store.purge({ mailBefore: start + 10 * 86_400_000, addressBefore: 0, sessionBefore: 0 });
      assert.deepEqual(await near(day - 10), counted);
    },
  ],
  [
    'topSenders: the envelope senders of the most mail since a time (deleted mail too, until purged), most first, ties by sender',
    async (store) => {
      // Since TF, later than any real mail: a store restored from a backup has senders of its own.
      const a = await address(store, 'a@example.com', TF);
      const from = (source: string, t: number) => newMail(a, t, { source });
      await store.insertMails([from('old@x.example', TF - 1), from('old@x.example', TF - 1), from('old@x.example', TF - 1), from('old@x.example', TF - 1)]);
      await store.insertMails([from('b@x.example', TF), from('a@x.example', TF + 1), from('c@x.example', TF + 2), from('c@x.example', TF + 3), from('', TF + 4)]);
      const deleted = from('c@x.example', TF + 5);
      await store.insertMails([deleted]);
      await store.softDeleteMail(a.id, deleted.uuid);
      assert.deepEqual(await store.topSenders(TF, 10), [
        { sender: 'c@x.example', mails: 3 },
        { sender: '', mails: 1 },
        { sender: 'a@x.example', mails: 1 },
        { sender: 'b@x.example', mails: 1 },
      ]);
      assert.deepEqual(await store.topSenders(TF, 2), [
        { sender: 'c@x.example', mails: 3 },
        { sender: '', mails: 1 },
      ]);
      assert.deepEqual((await store.topSenders(TF - 1, 1))[0], { sender: 'old@x.example', mails: 4 });
      await store.purge({ mailBefore: 0, addressBefore: 0, sessionBefore: 0 });
      assert.equal((await store.topSenders(TF, 1))[0]!.mails, 2, 'the purged mail is gone');
    },
  ],
  [
    'storageUsage counts the addresses, the live mails and their size, and a database size that grows with them',
    async (store) => {
      // Differences from what the store held (nothing, except in a store restored from a backup).
      const empty = await store.storageUsage();
      assert.ok(empty.databaseBytes > 0, 'the schema takes room');
      const a = await address(store, 'a@example.com');
      await address(store, 'b@example.com');
      const big = newMail(a, T0, { trace: Buffer.alloc(10), raw: Buffer.alloc(2 * 1024 * 1024, 'x') });
      const gone = newMail(a, T0, { raw: Buffer.alloc(100) });
      await store.insertMails([big, gone]);
      await store.softDeleteMail(a.id, gone.uuid);
      const used = await store.storageUsage();
      assert.deepEqual(
        { addresses: used.addresses - empty.addresses, mails: used.mails - empty.mails, mailBytes: used.mailBytes - empty.mailBytes },
        { addresses: 2, mails: 1, mailBytes: 2 * 1024 * 1024 + 10 },
      );
      assert.ok(used.databaseBytes > empty.databaseBytes, `${used.databaseBytes} > ${empty.databaseBytes}`);
    },
  ],

  // --- addresses -----------------------------------------------------------
  [
    'createAddress returns the new record',
    async (store) => {
      const a = await store.createAddress('alice@example.com', T0);
      assert.ok(a);
      assert.ok(Number.isSafeInteger(a.id) && a.id > 0, `id ${a.id} is a positive integer`);
      assert.deepEqual(a, { id: a.id, address: 'alice@example.com', createdAt: T0 });
    },
  ],
  [
    'createAddress returns undefined for a name that is taken, leaving the first untouched',
    async (store) => {
      const a = await address(store, 'alice@example.com', T0);
      assert.equal(await store.createAddress('alice@example.com', T0 + 5), undefined);
      assert.deepEqual(await store.findAddress('alice@example.com'), a);
      assert.deepEqual(await store.getAddress(a.id), a);
    },
  ],
  [
    'createAddress hands out increasing ids',
    async (store) => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await address(store, `u${i}@example.com`)).id);
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, `ids increase: ${ids.join(', ')}`);
    },
  ],
  [
    'a deleted name can be created again and gets a new, larger id (ids are never reused)',
    async (store) => {
      const a = await address(store, 'a@example.com', T0);
      const b = await address(store, 'b@example.com', T0);
      // Deleting the highest id is what exposes a reused rowid.
      assert.equal(await store.deleteAddress(b.id), true);
      const b2 = await address(store, 'b@example.com', T0 + 1);
      assert.ok(b2.id > b.id, `new id ${b2.id} > old id ${b.id}`);
      assert.equal(b2.createdAt, T0 + 1);
      assert.equal(await store.getAddress(b.id), undefined);
      assert.equal(await store.deleteAddress(a.id), true);
      const a2 = await address(store, 'a@example.com', T0 + 2);
      assert.ok(a2.id > b2.id, `new id ${a2.id} > every earlier id`);
    },
  ],
  [
    'getAddress and findAddress find live addresses only',
    async (store) => {
      const a = await address(store, 'alice@example.com', T0);
      const b = await address(store, 'bob@example.com', T0 + 1);
      assert.deepEqual(await store.getAddress(a.id), a);
      assert.deepEqual(await store.getAddress(b.id), b);
      assert.deepEqual(await store.findAddress('bob@example.com'), b);
      assert.equal(await store.getAddress(b.id + 1000), undefined);
      assert.equal(await store.findAddress('nobody@example.com'), undefined);
      // Names are stored as given (the caller lower-cases); lookups are exact.
      assert.equal(await store.findAddress('ALICE@example.com'), undefined);
    },
  ],
  [
    'deleteAddress returns true once, then false; unknown ids give false',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      assert.equal(await store.deleteAddress(a.id + 1000), false);
      assert.equal(await store.deleteAddress(a.id), true);
      assert.equal(await store.deleteAddress(a.id), false);
      assert.equal(await store.getAddress(a.id), undefined);
      assert.equal(await store.findAddress('alice@example.com'), undefined);
    },
  ],
  [
    'concurrent createAddress of one name: exactly one wins',
    async (store) => {
      const got = await Promise.all(Array.from({ length: 6 }, (_, i) => store.createAddress('race@example.com', T0 + i)));
      const winners = got.filter((a) => a !== undefined);
      assert.equal(winners.length, 1);
      assert.deepEqual(await store.findAddress('race@example.com'), winners[0]);
    },
  ],

  // --- mails ---------------------------------------------------------------
  [
    'insertMails stores several mails in one call and returns increasing ids',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      const batch = [newMail(a, T0 + 1), newMail(b, T0 + 2), newMail(a, T0 + 3)];
      const ids = await store.insertMails(batch);
      assert.equal(ids.length, 3);
      for (const id of ids) assert.ok(Number.isSafeInteger(id) && id > 0);
      assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `ids increase: ${ids.join(', ')}`);
      const [more] = await store.insertMails([newMail(b, T0 + 4)]);
      assert.ok(more! > ids[2]!);
      assert.deepEqual((await store.listMails(a.id, 10, 0)).count, 2);
      assert.deepEqual((await store.listMails(b.id, 10, 0)).count, 2);
    },
  ],
  [
    "concurrent deliveries: one address's mails become visible in id order; crossed multi-address batches do not deadlock",
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      // What a polling client sees of a's mail while the deliveries run: a client that
      // has seen id N is never later shown a new mail below N (GET /api/mails/wait?since=N).
      const snapshots: number[][] = [];
      let inserting = true;
      const poller = (async () => {
        while (inserting) {
          snapshots.push((await store.listMails(a.id, 100, 0)).results.map((m) => m.id));
          // A store that answers at once would starve the deliveries otherwise.
          await new Promise((r) => setImmediate(r));
        }
        snapshots.push((await store.listMails(a.id, 100, 0)).results.map((m) => m.id));
      })();
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const batch = i % 3 === 0 ? [newMail(a, T0 + i), newMail(b, T0 + i)] : i % 3 === 1 ? [newMail(b, T0 + i), newMail(a, T0 + i)] : [newMail(a, T0 + i)];
          return store.insertMails(batch);
        }),
      ).finally(() => (inserting = false));
      await poller;
      let seen = new Set<number>();
      let highest = 0;
      for (const snap of snapshots) {
        const fresh = snap.filter((id) => !seen.has(id));
        for (const id of fresh) assert.ok(id > highest, `id ${id} appeared after ${highest} had been seen (snapshots ${snapshots.length})`);
        seen = new Set([...seen, ...snap]);
        highest = Math.max(highest, ...snap);
      }
      assert.equal(snapshots.at(-1)!.length, 40);
    },
  ],
  [
    'insertMails of nothing returns []',
    async (store) => {
      assert.deepEqual(await store.insertMails([]), []);
    },
  ],
  [
    'insertMails is atomic: a failing mail stores none of its batch',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const existing = newMail(a, T0);
      await store.insertMails([existing]);
      // Duplicate uuid of a stored mail, second in the batch.
      const first = newMail(a, T0 + 1);
      await assert.rejects(store.insertMails([first, newMail(a, T0 + 2, { uuid: existing.uuid })]));
      // Duplicate uuid inside one batch.
      const twin = newMail(a, T0 + 3);
      await assert.rejects(store.insertMails([twin, { ...twin, createdAt: T0 + 4 }]));
      // Unknown address.
      const orphan = newMail({ id: a.id + 1000, address: 'ghost@example.com', createdAt: T0 }, T0 + 5);
      const third = newMail(a, T0 + 6);
      await assert.rejects(store.insertMails([third, orphan]));

      const list = await store.listMails(a.id, 10, 0);
      assert.deepEqual(uuidsOf(list), [existing.uuid]);
      assert.equal(list.count, 1);
      for (const m of [first, twin, third]) assert.equal(await store.getMail(a.id, m.uuid), undefined);
      // The store still works after the rollbacks.
      await store.insertMails([first]);
      assert.equal((await store.listMails(a.id, 10, 0)).count, 2);
    },
  ],
  [
    'concurrent insertMails all land, with distinct ids',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const batches = Array.from({ length: 5 }, (_, i) => [newMail(a, T0 + i), newMail(a, T0 + i)]);
      const ids = (await Promise.all(batches.map((b) => store.insertMails(b)))).flat();
      assert.equal(new Set(ids).size, 10);
      assert.equal((await store.listMails(a.id, 100, 0)).count, 10);
    },
  ],
  [
    'listMails returns summaries without raw, field for field',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const m = newMail(a, T0 + 42, {
        source: 'Ünïcødé <sender@example.org>',
        messageId: '<id-ü@example.org>',
        metadata: JSON.stringify({ subject: 'héllo ✉️ 𝄞', from: { name: 'Zoë' }, n: 1.5, nested: [null, true] }),
      });
      const [id] = await store.insertMails([m]);
      const list = await store.listMails(a.id, 10, 0);
      assert.deepEqual(list, { results: [summaryOf(m, id!)], count: 1 });
      assert.equal('raw' in list.results[0]!, false);
    },
  ],
  [
    'listMails is newest first by createdAt, ties broken by id descending',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      // Inserted out of order, some in one batch, with equal timestamps.
      const times = [T0 + 100, T0 + 300, T0 + 200, T0 + 300, T0 + 100];
      const single = await mailsAt(store, a, times.slice(0, 2));
      const batch = times.slice(2).map((t) => newMail(a, t));
      const batchIds = await store.insertMails(batch);
      const all = [...single, ...batch.map((mail, i) => ({ mail, id: batchIds[i]! }))];
      const expected = [...all].sort((x, y) => y.mail.createdAt - x.mail.createdAt || y.id - x.id).map((x) => summaryOf(x.mail, x.id));
      const list = await store.listMails(a.id, 10, 0);
      assert.deepEqual(list.results, expected);
      assert.equal(list.count, 5);
      // Spelled out: 300 (later id), 300, 200, 100 (later id), 100.
      assert.deepEqual(
        list.results.map((r) => r.id),
        [all[3]!.id, all[1]!.id, all[2]!.id, all[4]!.id, all[0]!.id],
      );
    },
  ],
  [
    'listMails pages with limit/offset, and count is the live total at every offset',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const inserted = await mailsAt(store, a, [T0 + 1, T0 + 2, T0 + 3, T0 + 4, T0 + 5]);
      const newestFirst = inserted.map((x) => x.mail.uuid).reverse();
      const page = (limit: number, offset: number) => store.listMails(a.id, limit, offset);

      assert.deepEqual(uuidsOf(await page(2, 0)), newestFirst.slice(0, 2));
      assert.deepEqual(uuidsOf(await page(2, 2)), newestFirst.slice(2, 4));
      assert.deepEqual(uuidsOf(await page(2, 4)), newestFirst.slice(4));
      assert.deepEqual(uuidsOf(await page(3, 1)), newestFirst.slice(1, 4));
      for (const [limit, offset] of [
        [2, 0],
        [2, 2],
        [2, 4],
        [5, 0], // a full first page
        [10, 0], // a short first page
        [1, 4],
        [10, 3],
      ] as const) {
        assert.equal((await page(limit, offset)).count, 5, `count at limit ${limit} offset ${offset}`);
      }
      for (const offset of [5, 6, 100]) {
        assert.deepEqual(await page(2, offset), { results: [], count: 5 }, `past the end at offset ${offset}`);
      }
    },
  ],
  [
    'listMails of an address without mail (or an unknown one) is empty',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      assert.deepEqual(await store.listMails(a.id, 10, 0), { results: [], count: 0 });
      assert.deepEqual(await store.listMails(a.id, 10, 20), { results: [], count: 0 });
      assert.deepEqual(await store.listMails(a.id + 1000, 10, 0), { results: [], count: 0 });
    },
  ],
  [
    'getMail returns the full record with the raw bytes exactly as stored',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const raw = Buffer.concat([
        Buffer.from('Subject: bytes\r\nContent-Type: application/octet-stream\r\n\r\n', 'latin1'),
        Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x0d, 0x0a, 0x00, 0x00, 0xc3, 0x28, 0x0a, 0x0d, 0x5c, 0x78, 0x27, 0x22]),
        Buffer.from('\r\n.\r\n', 'latin1'),
      ]);
      const m = newMail(a, T0 + 7, { raw });
      const [id] = await store.insertMails([m]);
      const got = await store.getMail(a.id, m.uuid);
      assert.ok(got);
      assert.ok(Buffer.isBuffer(got.raw), 'raw is a Buffer');
      assert.equal(Buffer.compare(got.raw, raw), 0, 'raw is byte-exact');
      assert.deepEqual(got, { ...summaryOf(m, id!), raw });
    },
  ],
  [
    'getMail round-trips a large raw message',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const raw = Buffer.alloc(3 * 1024 * 1024 + 7);
      for (let i = 0; i < raw.length; i++) raw[i] = (i * 131 + (i >> 9)) & 0xff;
      const m = newMail(a, T0, { raw });
      await store.insertMails([m]);
      const got = await store.getMail(a.id, m.uuid);
      assert.ok(got);
      assert.equal(got.raw.length, raw.length);
      assert.ok(got.raw.equals(raw), 'raw is byte-exact');
    },
  ],
  [
    'getMail round-trips an empty raw message as an empty Buffer',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const m = newMail(a, T0, { raw: Buffer.alloc(0) });
      await store.insertMails([m]);
      const got = await store.getMail(a.id, m.uuid);
      assert.ok(got && Buffer.isBuffer(got.raw));
      assert.equal(got.raw.length, 0);
    },
  ],
  [
    'getMail of an unknown uuid is undefined',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      await mailsAt(store, a, [T0]);
      assert.equal(await store.getMail(a.id, randomUUID()), undefined);
    },
  ],
  [
    "addresses are isolated: another address's mail cannot be listed, read, deleted or cleared",
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      const [ma] = await mailsAt(store, a, [T0 + 1, T0 + 2]);
      const [mb] = await mailsAt(store, b, [T0 + 3]);
      assert.equal(await store.getMail(b.id, ma!.mail.uuid), undefined);
      assert.equal(await store.getMail(a.id, mb!.mail.uuid), undefined);
      assert.equal(await store.softDeleteMail(b.id, ma!.mail.uuid), false);
      assert.deepEqual(uuidsOf(await store.listMails(b.id, 10, 0)), [mb!.mail.uuid]);
      assert.equal(await store.clearMails(b.id), 1);
      assert.equal((await store.listMails(a.id, 10, 0)).count, 2);
      assert.ok(await store.getMail(a.id, ma!.mail.uuid));
    },
  ],
  [
    'softDeleteMail hides a mail from listMails, its count and getMail',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const [m1, m2, m3] = await mailsAt(store, a, [T0 + 1, T0 + 2, T0 + 3]);
      assert.equal(await store.softDeleteMail(a.id, m2!.mail.uuid), true);
      assert.equal(await store.softDeleteMail(a.id, m2!.mail.uuid), false, 'already deleted');
      assert.equal(await store.softDeleteMail(a.id, randomUUID()), false, 'unknown uuid');
      assert.equal(await store.getMail(a.id, m2!.mail.uuid), undefined);
      assert.deepEqual(uuidsOf(await store.listMails(a.id, 10, 0)), [m3!.mail.uuid, m1!.mail.uuid]);
      assert.equal((await store.listMails(a.id, 10, 0)).count, 2);
      assert.deepEqual(await store.listMails(a.id, 1, 1), { results: [summaryOf(m1!.mail, m1!.id)], count: 2 });
      assert.deepEqual(await store.listMails(a.id, 1, 2), { results: [], count: 2 });
      // The uuid stays taken until the purge removes the row.
      await assert.rejects(store.insertMails([newMail(a, T0 + 4, { uuid: m2!.mail.uuid })]));
    },
  ],
  [
    'setSeen marks a live mail read or unread and returns it as listed; lists, searches and getMail show it at once',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const m1 = newMail(a, T0 + 1, { searchText: 'welcome aboard' });
      const m2 = newMail(a, T0 + 2, { searchText: 'your code' });
      const [id1, id2] = await store.insertMails([m1, m2]);
      assert.deepEqual(
        (await store.listMails(a.id, 10, 0)).results.map((m) => m.seen),
        [false, false],
        'a stored mail is unread',
      );
      assert.deepEqual(await store.setSeen(a.id, m1.uuid, true), { ...summaryOf(m1, id1!), seen: true });
      assert.deepEqual(await store.setSeen(a.id, m1.uuid, true), { ...summaryOf(m1, id1!), seen: true }, 'setting it again changes nothing');
      assert.deepEqual(await store.listMails(a.id, 10, 0), { results: [summaryOf(m2, id2!), { ...summaryOf(m1, id1!), seen: true }], count: 2 });
      assert.equal((await store.getMail(a.id, m1.uuid))?.seen, true);
      assert.equal((await store.getMail(a.id, m2.uuid))?.seen, false);
      assert.deepEqual((await store.searchMails(a.id, 'welcome', 10, 0)).results, [{ ...summaryOf(m1, id1!), seen: true }]);
      assert.deepEqual(await store.setSeen(a.id, m1.uuid, false), summaryOf(m1, id1!), 'and unread again');
      assert.equal((await store.getMail(a.id, m1.uuid))?.seen, false);
      assert.equal(await store.setSeen(a.id, randomUUID(), true), undefined, 'unknown uuid');
      await store.softDeleteMail(a.id, m2.uuid);
      assert.equal(await store.setSeen(a.id, m2.uuid, true), undefined, 'a deleted mail');
    },
  ],
  [
    "setSeen is scoped to the owning address: another address's uuid is not found and stays as it was",
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      const [ma] = await mailsAt(store, a, [T0 + 1]);
      const [mb] = await mailsAt(store, b, [T0 + 2]);
      assert.equal(await store.setSeen(b.id, ma!.mail.uuid, true), undefined);
      assert.equal(await store.setSeen(a.id + b.id + 1000, ma!.mail.uuid, true), undefined, 'unknown address');
      assert.equal((await store.getMail(a.id, ma!.mail.uuid))?.seen, false);
      assert.equal((await store.setSeen(b.id, mb!.mail.uuid, true))?.seen, true);
      assert.equal((await store.getMail(a.id, ma!.mail.uuid))?.seen, false, "b's own mail changed, not a's");
    },
  ],
  [
    'setAddressPassword keeps one hash per address, replaced by the next; none for an unknown address; it goes with its address',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      assert.equal(await store.getAddressPassword(a.id), undefined, 'none until set');
      assert.equal(await store.setAddressPassword(a.id, 'scrypt$first', T0 + 1), true);
      assert.deepEqual(await store.getAddressPassword(a.id), { hash: 'scrypt$first', updatedAt: T0 + 1 });
      assert.equal(await store.setAddressPassword(a.id, 'scrypt$second', T0 + 2), true);
      assert.deepEqual(await store.getAddressPassword(a.id), { hash: 'scrypt$second', updatedAt: T0 + 2 }, 'replaced');
      assert.equal(await store.getAddressPassword(b.id), undefined, "another address's is its own");
      assert.equal(await store.setAddressPassword(a.id + b.id + 1000, 'scrypt$x', T0), false, 'unknown address');
      assert.equal(await store.getAddressPassword(a.id + b.id + 1000), undefined);
      await store.setAddressPassword(b.id, 'scrypt$bob', T0 + 3);
      assert.equal(await store.deleteAddress(a.id), true);
      assert.equal(await store.getAddressPassword(a.id), undefined, 'deleted with the address');
      const again = await address(store, 'alice@example.com', T0 + 4);
      assert.equal(await store.getAddressPassword(again.id), undefined, 'a new address of the same name has none');
      await store.purge({ mailBefore: 0, addressBefore: T0 + 4, sessionBefore: 0 });
      assert.equal(await store.getAddressPassword(b.id), undefined, 'purged with the address');
      assert.deepEqual(await store.getAddressPassword(again.id), undefined);
    },
  ],
  [
    'clearMails soft-deletes every live mail of the address and returns how many',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const [m1] = await mailsAt(store, a, [T0 + 1, T0 + 2, T0 + 3]);
      await store.softDeleteMail(a.id, m1!.mail.uuid);
      assert.equal(await store.clearMails(a.id), 2, 'already deleted mail is not counted');
      assert.equal(await store.clearMails(a.id), 0);
      assert.deepEqual(await store.listMails(a.id, 10, 0), { results: [], count: 0 });
      assert.equal(await store.clearMails(a.id + 1000), 0, 'unknown address');
      const [fresh] = await mailsAt(store, a, [T0 + 4]);
      assert.deepEqual(uuidsOf(await store.listMails(a.id, 10, 0)), [fresh!.mail.uuid]);
    },
  ],
  [
    'deleting an address removes its mails',
    async (store) => {
      const a = await address(store, 'alice@example.com');
      const b = await address(store, 'bob@example.com');
      const gone = await mailsAt(store, a, [T0 + 1, T0 + 2]);
      const [kept] = await mailsAt(store, b, [T0 + 3]);
      await store.softDeleteMail(a.id, gone[1]!.mail.uuid);
      assert.equal(await store.deleteAddress(a.id), true);
      assert.deepEqual(await store.listMails(a.id, 10, 0), { results: [], count: 0 });
      assert.equal(await store.getMail(a.id, gone[0]!.mail.uuid), undefined);
      const a2 = await address(store, 'alice@example.com', T0 + 10);
      assert.deepEqual(await store.listMails(a2.id, 10, 0), { results: [], count: 0 }, 'the new address inherits nothing');
      // The rows are really gone (live and soft-deleted): their uuids are free again.
      await store.insertMails(gone.map((g) => newMail(a2, T0 + 11, { uuid: g.mail.uuid })));
      assert.equal((await store.listMails(a2.id, 10, 0)).count, 2);
      assert.deepEqual(uuidsOf(await store.listMails(b.id, 10, 0)), [kept!.mail.uuid]);
    },
  ],

  // --- sessions ------------------------------------------------------------
  [
    'createSession / getSession: a new session has no active address and no members',
    async (store) => {
      await store.createSession('s1', T0);
      assert.deepEqual(await store.getSession('s1'), { id: 's1', activeAddressId: null, createdAt: T0 });
      assert.deepEqual(await store.listSessionAddresses('s1'), []);
      assert.equal(await store.getSession('nope'), undefined);
      assert.deepEqual(await store.listSessionAddresses('nope'), []);
      await assert.rejects(store.createSession('s1', T0 + 1), 'session ids are unique');
      assert.deepEqual(await store.getSession('s1'), { id: 's1', activeAddressId: null, createdAt: T0 });
    },
  ],
  [
    'addSessionAddress adds a member and makes it active; members list oldest-added first',
    async (store) => {
      const a = await address(store, 'a@example.com', T0 + 100);
      const b = await address(store, 'b@example.com', T0 + 50);
      await store.createSession('s1', T0);
      await store.addSessionAddress('s1', a.id, T0 + 1, 3);
      // Adding an address renews the session.
      assert.deepEqual(await store.getSession('s1'), { id: 's1', activeAddressId: a.id, createdAt: T0 + 1 });
      await store.addSessionAddress('s1', b.id, T0 + 2, 3);
      assert.equal((await store.getSession('s1'))?.activeAddressId, b.id);
      // createdAt is the address's, not the time it joined the session.
      assert.deepEqual(await store.listSessionAddresses('s1'), [
        { addressId: a.id, address: a.address, createdAt: T0 + 100 },
        { addressId: b.id, address: b.address, createdAt: T0 + 50 },
      ]);
    },
  ],
  [
    're-adding a member refreshes it: it moves to the end and becomes active',
    async (store) => {
      const [a, b, c] = [await address(store, 'a@x.test'), await address(store, 'b@x.test'), await address(store, 'c@x.test')];
      await store.createSession('s1', T0);
      await store.addSessionAddress('s1', a.id, T0 + 1, 2);
      await store.addSessionAddress('s1', b.id, T0 + 2, 2);
      await store.addSessionAddress('s1', a.id, T0 + 3, 2);
      assert.deepEqual(await members(store, 's1'), ['b@x.test', 'a@x.test']);
      assert.equal((await store.getSession('s1'))?.activeAddressId, a.id);
      // b is now the oldest member, so it is the one dropped.
      await store.addSessionAddress('s1', c.id, T0 + 4, 2);
      assert.deepEqual(await members(store, 's1'), ['a@x.test', 'c@x.test']);
      assert.equal((await store.getSession('s1'))?.activeAddressId, c.id);
    },
  ],
  [
    'with max 3, a fourth address drops the oldest membership (the address itself stays)',
    async (store) => {
      const addrs: AddressRecord[] = [];
      for (const n of ['a', 'b', 'c', 'd']) addrs.push(await address(store, `${n}@x.test`));
      await store.createSession('s1', T0);
      for (const [i, a] of addrs.entries()) await store.addSessionAddress('s1', a.id, T0 + i, 3);
      assert.deepEqual(await members(store, 's1'), ['b@x.test', 'c@x.test', 'd@x.test']);
      assert.equal((await store.getSession('s1'))?.activeAddressId, addrs[3]!.id);
      assert.deepEqual(await store.getAddress(addrs[0]!.id), addrs[0]);
    },
  ],
  [
    'membership ties on addedAt are ordered by address id; the trim drops the lowest id',
    async (store) => {
      const [a, b, c] = [await address(store, 'a@x.test'), await address(store, 'b@x.test'), await address(store, 'c@x.test')];
      await store.createSession('s1', T0);
      // Added in reverse id order, all at the same instant.
      await store.addSessionAddress('s1', c.id, T0 + 1, 2);
      await store.addSessionAddress('s1', b.id, T0 + 1, 2);
      assert.deepEqual(await members(store, 's1'), ['b@x.test', 'c@x.test']);
      await store.addSessionAddress('s1', a.id, T0 + 1, 2);
      assert.deepEqual(await members(store, 's1'), ['b@x.test', 'c@x.test']);
      // The newest call still sets the active address, even though a was trimmed at once.
      assert.equal((await store.getSession('s1'))?.activeAddressId, a.id);
    },
  ],
  [
    'sessions are independent: one address may belong to several',
    async (store) => {
      const [a, b] = [await address(store, 'a@x.test'), await address(store, 'b@x.test')];
      await store.createSession('s1', T0);
      await store.createSession('s2', T0);
      await store.addSessionAddress('s1', a.id, T0 + 1, 1);
      await store.addSessionAddress('s2', a.id, T0 + 2, 1);
      await store.addSessionAddress('s2', b.id, T0 + 3, 1);
      assert.deepEqual(await members(store, 's1'), ['a@x.test']);
      assert.deepEqual(await members(store, 's2'), ['b@x.test']);
    },
  ],
  [
    'addSessionAddress to an unknown session rejects and creates nothing',
    async (store) => {
      const a = await address(store, 'a@x.test');
      await assert.rejects(store.addSessionAddress('ghost', a.id, T0, 3));
      assert.equal(await store.getSession('ghost'), undefined);
      assert.deepEqual(await store.listSessionAddresses('ghost'), []);
    },
  ],
  [
    'concurrent addSessionAddress calls never leave more than max members',
    async (store) => {
      const addrs: AddressRecord[] = [];
      for (let i = 0; i < 6; i++) addrs.push(await address(store, `m${i}@x.test`));
      await store.createSession('s1', T0);
      await Promise.all(addrs.map((a, i) => store.addSessionAddress('s1', a.id, T0 + i, 2)));
      assert.deepEqual(await members(store, 's1'), ['m4@x.test', 'm5@x.test']);
    },
  ],
  [
    'rotateSession moves the session and its members to the new id, sets the active address and renews it',
    async (store) => {
      const [a, b] = [await address(store, 'a@x.test'), await address(store, 'b@x.test')];
      await store.createSession('old', T0);
      await store.addSessionAddress('old', a.id, T0 + 1, 3);
      await store.addSessionAddress('old', b.id, T0 + 2, 3);
      assert.equal(await store.rotateSession('old', 'new', a.id, T0 + 5), true);
      assert.equal(await store.getSession('old'), undefined);
      assert.deepEqual(await store.listSessionAddresses('old'), []);
      assert.deepEqual(await store.getSession('new'), { id: 'new', activeAddressId: a.id, createdAt: T0 + 5 });
      assert.deepEqual(await members(store, 'new'), ['a@x.test', 'b@x.test']);
      // The new id works like any session; the old id is free again and starts empty.
      await store.addSessionAddress('new', a.id, T0 + 3, 3);
      assert.deepEqual(await members(store, 'new'), ['b@x.test', 'a@x.test']);
      await store.createSession('old', T0 + 5);
      assert.deepEqual(await store.listSessionAddresses('old'), []);
    },
  ],
  [
    'rotateSession of an unknown id returns false and creates nothing',
    async (store) => {
      const a = await address(store, 'a@x.test');
      assert.equal(await store.rotateSession('ghost', 'new', a.id, T0), false);
      assert.equal(await store.getSession('new'), undefined);
      assert.equal(await store.getSession('ghost'), undefined);
    },
  ],
  [
    'deleteSession removes the session and its memberships, not the addresses',
    async (store) => {
      const a = await address(store, 'a@x.test');
      await store.createSession('s1', T0);
      await store.addSessionAddress('s1', a.id, T0 + 1, 3);
      assert.equal(await store.deleteSession('s1'), true);
      assert.equal(await store.deleteSession('s1'), false);
      assert.equal(await store.deleteSession('ghost'), false);
      assert.equal(await store.getSession('s1'), undefined);
      assert.deepEqual(await store.listSessionAddresses('s1'), []);
      assert.deepEqual(await store.getAddress(a.id), a);
      await store.createSession('s1', T0 + 2);
      assert.deepEqual(await store.listSessionAddresses('s1'), [], 'a re-created id starts empty');
    },
  ],
  [
    'deleting an address removes it from sessions and clears it where it was active',
    async (store) => {
      const [a, b] = [await address(store, 'a@x.test'), await address(store, 'b@x.test')];
      await store.createSession('s1', T0);
      await store.createSession('s2', T0);
      await store.addSessionAddress('s1', a.id, T0 + 1, 3);
      await store.addSessionAddress('s1', b.id, T0 + 2, 3); // s1: active b
      await store.addSessionAddress('s2', b.id, T0 + 1, 3);
      await store.addSessionAddress('s2', a.id, T0 + 2, 3); // s2: active a
      assert.equal(await store.deleteAddress(a.id), true);
      assert.deepEqual(await members(store, 's1'), ['b@x.test']);
      assert.deepEqual(await members(store, 's2'), ['b@x.test']);
      assert.equal((await store.getSession('s1'))?.activeAddressId, b.id, 'untouched where not active');
      assert.deepEqual(await store.getSession('s2'), { id: 's2', activeAddressId: null, createdAt: T0 + 2 });
    },
  ],

  // --- purge ---------------------------------------------------------------
  [
    'purge removes old and soft-deleted mail, old addresses with their mail, and old sessions',
    async (store) => {
      const cut = T0 + 1000;
      const oldAddr = await address(store, 'old@x.test', T0);
      const edgeAddr = await address(store, 'edge@x.test', cut); // exactly at the cutoff: kept
      const fresh = await address(store, 'fresh@x.test', cut + 1);
      // oldAddr's mails go with it (and, as in the reference backend, are not counted in `mails`).
      const [oldAddrOldMail, oldAddrNewMail] = await mailsAt(store, oldAddr, [T0, cut + 5]);
      const [oldMail, edgeMail, newMail1, deletedNewMail] = await mailsAt(store, fresh, [T0 + 1, cut, cut + 2, cut + 3]);
      await store.softDeleteMail(fresh.id, deletedNewMail!.mail.uuid);
      const [edgeAddrMail] = await mailsAt(store, edgeAddr, [cut + 4]);

      await store.createSession('s-old', T0);
      await store.createSession('s-renewed', T0);
      await store.addSessionAddress('s-renewed', fresh.id, cut + 1, 3); // renewed past the cutoff: kept
      await store.createSession('s-edge', cut);
      await store.createSession('s-new', cut + 1);
      await store.addSessionAddress('s-new', fresh.id, cut + 1, 3);
      await store.addSessionAddress('s-new', oldAddr.id, cut + 2, 3); // active, and purged

      const result = await store.purge({ mailBefore: cut, addressBefore: cut, sessionBefore: cut });
      assert.deepEqual(result, { mails: 2, addresses: 1, sessions: 1 });

      assert.equal(await store.getAddress(oldAddr.id), undefined);
      assert.equal(await store.findAddress('old@x.test'), undefined);
      assert.deepEqual(await store.getAddress(edgeAddr.id), edgeAddr);
      assert.deepEqual(await store.getAddress(fresh.id), fresh);
      assert.deepEqual(await store.listMails(oldAddr.id, 10, 0), { results: [], count: 0 });
      assert.equal(await store.getMail(oldAddr.id, oldAddrNewMail!.mail.uuid), undefined);
      assert.deepEqual(uuidsOf(await store.listMails(fresh.id, 10, 0)), [newMail1!.mail.uuid, edgeMail!.mail.uuid]);
      assert.equal(await store.getMail(fresh.id, oldMail!.mail.uuid), undefined);
      assert.deepEqual(uuidsOf(await store.listMails(edgeAddr.id, 10, 0)), [edgeAddrMail!.mail.uuid]);
      // Purged rows are really gone: every purged uuid can be stored again.
      await store.insertMails(
        [oldAddrOldMail, oldAddrNewMail, oldMail, deletedNewMail].map((m) => newMail(fresh, cut + 10, { uuid: m!.mail.uuid })),
      );

      assert.equal(await store.getSession('s-old'), undefined);
      assert.deepEqual(await store.listSessionAddresses('s-old'), []);
      assert.deepEqual(await members(store, 's-renewed'), ['fresh@x.test']);
      assert.deepEqual(await store.getSession('s-edge'), { id: 's-edge', activeAddressId: null, createdAt: cut });
      assert.deepEqual(await store.getSession('s-new'), { id: 's-new', activeAddressId: null, createdAt: cut + 2 });
      assert.deepEqual(await members(store, 's-new'), ['fresh@x.test']);
    },
  ],
  [
    'purge uses independent cutoffs',
    async (store) => {
      const a = await address(store, 'a@x.test', T0);
      await mailsAt(store, a, [T0, T0 + 10]);
      await store.createSession('s1', T0);
      // Only mail older than T0 + 5 goes; the address and session stay.
      assert.deepEqual(await store.purge({ mailBefore: T0 + 5, addressBefore: T0, sessionBefore: T0 }), { mails: 1, addresses: 0, sessions: 0 });
      assert.equal((await store.listMails(a.id, 10, 0)).count, 1);
      assert.ok(await store.getSession('s1'));
      // Only the session goes.
      assert.deepEqual(await store.purge({ mailBefore: T0, addressBefore: T0, sessionBefore: T0 + 1 }), { mails: 0, addresses: 0, sessions: 1 });
      assert.ok(await store.getAddress(a.id));
      // Only the address goes (its remaining mail with it, uncounted).
      assert.deepEqual(await store.purge({ mailBefore: T0, addressBefore: T0 + 1, sessionBefore: T0 }), { mails: 0, addresses: 1, sessions: 0 });
      assert.equal(await store.getAddress(a.id), undefined);
    },
  ],
  [
    'purge with nothing to do returns zeros',
    async (store) => {
      assert.deepEqual(await store.purge({ mailBefore: T0, addressBefore: T0, sessionBefore: T0 }), { mails: 0, addresses: 0, sessions: 0 });
      const a = await address(store, 'a@x.test', T0);
      await mailsAt(store, a, [T0]);
      await store.createSession('s1', T0);
      assert.deepEqual(await store.purge({ mailBefore: T0, addressBefore: T0, sessionBefore: T0 }), { mails: 0, addresses: 0, sessions: 0 });
      assert.equal((await store.listMails(a.id, 10, 0)).count, 1);
    },
  ],

  // --- lifecycle -----------------------------------------------------------
  [
    'kind names the backend',
    async (store) => {
      assert.equal(typeof store.kind, 'string');
      assert.ok(store.kind.length > 0);
    },
  ],
  [
    'ping resolves',
    async (store) => {
      await store.ping();
      await store.ping();
    },
  ],
  [
    'openMail: the mail as getMail finds it, its message read a part at a time, again on each call; a part gone while read throws PartsGoneError',
    async (store) => {
      const a = await address(store, 'open@example.com');
      // Three parts of 512 KiB and a few bytes, with bytes above 0x7f across each edge.
      const raw = Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), Buffer.alloc(2 * PART_BYTES + 5, 'ä')]);
      const m = newMail(a, T0, { trace: Buffer.from('Received: x\r\n'), raw });
      await store.insertMails([m]);
      const whole = (await store.getMail(a.id, m.uuid))!.raw;
      const reader = (await store.openMail(a.id, m.uuid))!;
      const { bytes, pieces, ...summary } = reader;
      const { raw: _raw, ...expected } = (await store.getMail(a.id, m.uuid))!;
      assert.deepEqual(summary, expected);
      assert.equal(bytes, whole.length);
      for (let i = 0; i < 2; i++) {
        const read: Buffer[] = [];
        for await (const piece of pieces()) read.push(piece);
        assert.ok(read.length > 2, 'more than the row holds: read part by part');
        assert.ok(Buffer.concat(read).equals(whole), `read ${i + 1}`);
      }
      assert.equal(await store.openMail(a.id, randomUUID()), undefined);
      assert.equal(await store.openMail(a.id + 1000, m.uuid), undefined);
      // Deleted (and so purged) while it is read.
      const iterator = pieces()[Symbol.asyncIterator]();
      await iterator.next();
      await iterator.next();
      assert.equal(await store.deleteAddress(a.id), true);
      await assert.rejects(async () => {
        for (let step = await iterator.next(); !step.done; step = await iterator.next());
      }, PartsGoneError);
    },
  ],
  [
    'openAttachment: the attachment as getAttachment finds it, its bytes read a part at a time; none stored: bytes null',
    async (store) => {
      const a = await address(store, 'attach@example.com');
      const big = Buffer.alloc(2 * PART_BYTES + 3, 'ab');
      const m = newMail(a, T0, { body: { raw: Buffer.from('x'), attachments: [big, Buffer.from('small')] } });
      await store.insertMails([m]);
      const read = async (index: number) => {
        const reader = (await store.openAttachment(a.id, m.uuid, index))!;
        const pieces: Buffer[] = [];
        for await (const piece of reader.pieces()) pieces.push(piece);
        return { metadata: reader.metadata, legacy: reader.legacy, bytes: reader.bytes, pieces: pieces.length, content: Buffer.concat(pieces) };
      };
      assert.deepEqual(await read(0), { metadata: m.metadata, legacy: false, bytes: big.length, pieces: 3, content: big });
      assert.deepEqual(await read(1), { metadata: m.metadata, legacy: false, bytes: 5, pieces: 1, content: Buffer.from('small') });
      assert.deepEqual(await read(2), { metadata: m.metadata, legacy: false, bytes: null, pieces: 0, content: Buffer.alloc(0) });
      assert.equal(await store.openAttachment(a.id, randomUUID(), 0), undefined);
      // Purged while it is read.
      const iterator = (await store.openAttachment(a.id, m.uuid, 0))!.pieces()[Symbol.asyncIterator]();
      await iterator.next();
      assert.equal(await store.deleteAddress(a.id), true);
      await assert.rejects(async () => {
        for (let step = await iterator.next(); !step.done; step = await iterator.next());
      }, PartsGoneError);
    },
  ],
  [
    'close resolves, and closing twice is harmless',
    async (store) => {
      await store.close();
      await store.close();
    },
  ],
];
