// GET /api/mails/search over real SMTP and HTTP: a word only the body has, HTML-only
// mail, an encoded subject, isolation between addresses, bad input and the rate limit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, request, sendMail, serversStoppedAfter } from './helpers/harness.js';

const start = serversStoppedAfter();
const subjects = (r: { json: { results: { metadata: string }[] } }) => r.json.results.map((m) => JSON.parse(m.metadata).subject as string);

describe('GET /api/mails/search', () => {
  it('finds mail by a word of its body, its HTML, its subject or its sender; newest first; only the address own', async () => {
    const server = await start();
    const { address, jwt } = await createAddress(server, { name: 'finder' });
    const other = await createAddress(server, { name: 'bystander' });
    await sendMail(server.smtpPort, { to: [address], from: 'shop@store.example', message: message({ Subject: 'Order confirmed', From: 'Store <shop@store.example>' }, 'Your parcel ships tomorrow.\nReference pineapple-42.') });
    await sendMail(server.smtpPort, {
      to: [address],
      message: ['Subject: =?UTF-8?B?Q2Fmw6kgdGltZQ==?=', 'Content-Type: text/html; charset=utf-8', '', '<p>Meet at the <b>lighthouse</b> at noon.</p>', ''].join('\r\n'),
    });
    await sendMail(server.smtpPort, { to: [other.address], message: message({ Subject: 'Not yours' }, 'pineapple lighthouse') });
    const search = (q: string, extra = '') => request(server.httpUrl, `/api/mails/search?q=${encodeURIComponent(q)}&limit=10&offset=0${extra}`, { jwt });

    const body = await search('pineapple');
    assert.equal(body.status, 200);
    assert.equal(body.json.count, 1);
    assert.deepEqual(subjects(body), ['Order confirmed']);
    assert.deepEqual(subjects(await search('lighthouse')), ['Café time'], 'a word of the HTML of an HTML-only mail');
    assert.deepEqual(subjects(await search('cafe')), ['Café time'], 'the decoded subject, accents ignored');
    assert.deepEqual(subjects(await search('store.example')), ['Order confirmed'], 'the sender');
    assert.deepEqual(subjects(await search('noon tomorrow')), [], 'every word must match in one mail');
    // The other address's token finds only its own.
    const theirs = await request(server.httpUrl, '/api/mails/search?q=pineapple&limit=10&offset=0', { jwt: other.jwt });
    assert.deepEqual(subjects(theirs), ['Not yours']);
  });

  it('refuses bad input with a plain-text 400 and no token with 401', async () => {
    const server = await start();
    const { jwt } = await createAddress(server);
    for (const qs of ['q=&limit=10&offset=0', 'limit=10&offset=0', `q=${'x'.repeat(201)}&limit=10&offset=0`, 'q=a&limit=0&offset=0', 'q=a&limit=10', 'q=a&limit=1e1&offset=0']) {
      const r = await request(server.httpUrl, `/api/mails/search?${qs}`, { jwt });
      assert.equal(r.status, 400, qs);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/, qs);
    }
    const punctuation = await request(server.httpUrl, `/api/mails/search?q=${encodeURIComponent('"*()')}&limit=10&offset=0`, { jwt });
    assert.equal(punctuation.status, 200);
    assert.deepEqual(punctuation.json, { results: [], count: 0 });
    assert.equal((await request(server.httpUrl, '/api/mails/search?q=a&limit=10&offset=0')).status, 401);
  });

  it('is counted with listing (RATE_LIMIT_MAILS): at the limit it works, past it 429', async () => {
    const server = await start({ RATE_LIMIT_MAILS: '2/60' });
    const { jwt } = await createAddress(server);
    for (let i = 0; i < 2; i++) assert.equal((await request(server.httpUrl, '/api/mails/search?q=a&limit=10&offset=0', { jwt })).status, 200);
    const over = await request(server.httpUrl, '/api/mails/search?q=a&limit=10&offset=0', { jwt });
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) > 0);
  });
});
