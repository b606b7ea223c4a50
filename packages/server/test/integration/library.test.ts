// The public entry's data preparation (src/library.ts): a store opened with openStore()
// on a running service's DATA_DIR, filled with mailMetadata()'s metadata, and read back
// over the API with a signAddressToken() token, as a program seeding a service does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { mailMetadata, openStore, signAddressToken, startTempInbox } from '../../src/index.js';
import { createAddress, message, request, sendMail } from '../helpers/harness.js';
import { PG_URL, skipUnless } from '../helpers/services.js';

const JWT_SECRET = 'library-test-Vq8rT2xK5mN9pL3wZ7bC4dF6';
const RAW = message(
  { From: 'App <no-reply@app.example.com>', Subject: 'Your sign-in code', 'Message-ID': '<seeded.1@app.example.com>' },
  'Your code is 424242. Or open https://app.example.com/verify?t=abc to sign in.',
);
const pgSkip = skipUnless('postgres');

describe('openStore, mailMetadata, signAddressToken', () => {
  it('a mail written through openStore is served to the address signAddressToken signs for, with the metadata SMTP delivery stores', async () => {
    const service = await startTempInbox({ env: { JWT_SECRET } });
    try {
      const raw = Buffer.from(RAW);
      const metadata = await mailMetadata(raw);
      assert.equal(metadata.subject, 'Your sign-in code');
      assert.deepEqual(metadata.codes, ['424242']);
      assert.deepEqual(metadata.links, ['https://app.example.com/verify?t=abc']);

      const store = await openStore({ dataDir: service.dataDir });
      const uuid = randomUUID();
      let record;
      try {
        assert.equal(store.kind, 'sqlite');
        record = await store.createAddress(`seeded@${service.domain}`, Date.now());
        assert.ok(record, 'the address is created');
        const trace = Buffer.from(`Received: from mx.example.com by test; ${new Date().toUTCString()}\r\n`);
        await store.insertMails([
          {
            uuid,
            addressId: record.id,
            address: record.address,
            source: 'no-reply@app.example.com',
            messageId: '<seeded.1@app.example.com>',
            metadata: JSON.stringify(metadata),
            trace,
            body: { raw, attachments: [] },
            createdAt: Date.now(),
            searchText: 'Your sign-in code',
          },
        ]);
        assert.equal((await store.searchMails(record.id, 'sign-in', 10, 0)).count, 1);
      } finally {
        await store.close();
      }

      const jwt = await signAddressToken(JWT_SECRET, record);
      const list = await request(service.url, '/api/mails?limit=10&offset=0', { jwt });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.json.results.map((m: { uuid: string }) => m.uuid),
        [uuid],
      );
      const served = JSON.parse(list.json.results[0].metadata);
      assert.deepEqual(served.codes, ['424242']);
      const found = await request(service.url, '/api/mails/search?q=sign-in&limit=10&offset=0', { jwt });
      assert.equal(found.status, 200, found.text);
      assert.equal(found.json.count, 1);

      // The same message delivered over SMTP carries the same subject, codes and links.
      const other = await createAddress({ httpUrl: service.url });
      assert.equal((await sendMail(service.smtpPort, { to: [other.address], message: RAW })).code, 250);
      const delivered = await request(service.url, '/api/mails?limit=10&offset=0', { jwt: other.jwt });
      const stored = JSON.parse(delivered.json.results[0].metadata);
      assert.deepEqual({ subject: stored.subject, codes: stored.codes, links: stored.links }, { subject: metadata.subject, codes: metadata.codes, links: metadata.links });
    } finally {
      await service.stop();
    }
  });

  it('a token signed with another secret is refused', async () => {
    const service = await startTempInbox({ env: { JWT_SECRET } });
    try {
      const { address } = await createAddress({ httpUrl: service.url });
      const store = await openStore({ dataDir: service.dataDir });
      let record;
      try {
        record = await store.findAddress(address);
      } finally {
        await store.close();
      }
      assert.ok(record);
      const good = await request(service.url, '/api/mails?limit=1&offset=0', { jwt: await signAddressToken(JWT_SECRET, record) });
      assert.equal(good.status, 200, good.text);
      const bad = await request(service.url, '/api/mails?limit=1&offset=0', { jwt: await signAddressToken('another-secret-Hj4kL8mN2pQ6rS0tU3vW', record) });
      assert.equal(bad.status, 401, bad.text);
    } finally {
      await service.stop();
    }
  });

  it('openStore on a DATABASE_URL and DATABASE_SCHEMA creates the schema the service then serves', { skip: pgSkip }, async () => {
    const schema = `library_${process.pid}_${randomBytes(4).toString('hex')}`;
    try {
      const store = await openStore({ databaseUrl: PG_URL, databaseSchema: schema });
      let record;
      const uuid = randomUUID();
      try {
        assert.equal(store.kind, 'postgres');
        record = await store.createAddress('seeded@temp-inbox.localhost', Date.now());
        assert.ok(record);
        const raw = Buffer.from(RAW);
        const metadata = JSON.stringify(await mailMetadata(raw));
        await store.insertMails([{ uuid, addressId: record.id, address: record.address, source: 'no-reply@app.example.com', messageId: '<seeded.1@app.example.com>', metadata, trace: Buffer.alloc(0), body: { raw, attachments: [] }, createdAt: Date.now() }]);
      } finally {
        await store.close();
      }
      const service = await startTempInbox({ env: { JWT_SECRET, DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema } });
      try {
        const list = await request(service.url, '/api/mails?limit=10&offset=0', { jwt: await signAddressToken(JWT_SECRET, record) });
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(
          list.json.results.map((m: { uuid: string }) => m.uuid),
          [uuid],
        );
      } finally {
        await service.stop();
      }
    } finally {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    }
  });
});
