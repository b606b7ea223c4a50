// GET /api/mails/search over real SMTP and HTTP: a word only the body has, HTML-only
// mail, an encoded subject, isolation between addresses, bad input and the rate limit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, request, sendMail, serversStoppedAfter } from '../../helpers/harness.js';

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
    const punctuation = await request(server.httpUrl, `/api/mails/search?q=${encodeURIComponent('*() :: -')}&limit=10&offset=0`, { jwt });
    assert.equal(punctuation.status, 200);
    assert.deepEqual(punctuation.json, { results: [], count: 0 });
    assert.equal((await request(server.httpUrl, '/api/mails/search?q=a&limit=10&offset=0')).status, 401);
  });

  it('takes the search syntax: from: to: subject: has:attachment is:read is:unread before: after:, phrases and - ; bad syntax is a plain-text 400 that says why', async () => {
    const server = await start();
    const { address, jwt } = await createAddress(server, { name: 'syntax' });
    const attached = [
      'From: Shop <orders@shop.example>',
      'Subject: Your order shipped',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'The tracking parcel number is inside.',
      '--b',
      'Content-Type: application/pdf; name="label.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('%PDF-1.4 label').toString('base64'),
      '--b--',
      '',
    ].join('\r\n');
    await sendMail(server.smtpPort, { to: [address], from: 'orders@shop.example', message: attached });
    await sendMail(server.smtpPort, { to: [address], from: 'noreply@bank.example', message: message({ Subject: 'Verification code', From: 'Bank <noreply@bank.example>' }, 'Your code is 123456.') });
    const search = (q: string) => request(server.httpUrl, `/api/mails/search?q=${encodeURIComponent(q)}&limit=10&offset=0`, { jwt });
    const code = (await search('verification')).json.results[0].uuid as string;
    assert.equal((await request(server.httpUrl, `/api/mail/${code}`, { jwt, method: 'PATCH', body: { seen: true } })).status, 200);
    const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const cases: [string, string[]][] = [
      ['from:shop', ['Your order shipped']],
      ['-from:shop', ['Verification code']],
      ['from:"Bank"', ['Verification code']],
      [`to:${address.split('@')[0]}`, ['Verification code', 'Your order shipped']],
      ['subject:"order shipped"', ['Your order shipped']],
      ['has:attachment', ['Your order shipped']],
      ['-has:attachment', ['Verification code']],
      ['is:read', ['Verification code']],
      ['is:unread', ['Your order shipped']],
      [`after:${day(-1)} before:${day(2)}`, ['Verification code', 'Your order shipped']],
      [`before:${day(-1)}`, []],
      ['"tracking parcel" -bank', ['Your order shipped']],
      ['your -"tracking parcel"', ['Verification code']],
      ['12', []],
      ['123', ['Verification code']],
    ];
    for (const [q, want] of cases) {
      const r = await search(q);
      assert.equal(r.status, 200, q);
      assert.deepEqual(subjects(r), want, q);
    }
    const bad: [string, RegExp][] = [
      ['"tracking parcel', /quote at character 1 is not closed/],
      ['is:starred', /is:starred is not known; is:read, is:unread and is:tagged are/],
      ['has:wings', /has:attachment/],
      ['before:2024-13-01', /not a date; write it as YYYY-MM-DD/],
      ['from: shop', /from: needs a value/],
      ['a b c d e f g h i', /9 terms; at most 8/],
    ];
    for (const [q, reason] of bad) {
      const r = await search(q);
      assert.equal(r.status, 400, q);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/, q);
      assert.match(r.text, reason, q);
    }
  });

  it('is counted with listing (RATE_LIMIT_MAILS): at the limit it works, past it 429', async () => {
    const server = await start({ RATE_LIMIT_MAILS: '2/60' });
    const { jwt } = await createAddress(server);
    for (let i = 0; i < 2; i++) assert.equal((await request(server.httpUrl, '/api/mails/search?q=a&limit=10&offset=0', { jwt })).status, 200);
    const over = await request(server.httpUrl, '/api/mails/search?q=a&limit=10&offset=0', { jwt });
    assert.equal(over.status, 429);
    assert.equal(over.headers.get('retry-after'), '60', 'the refusal blocks for one whole window');
  });
});
