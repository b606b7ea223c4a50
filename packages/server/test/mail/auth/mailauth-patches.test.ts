// mailauth's internals that src/mail/auth/mailauth-patches.ts replaces: the version is pinned
// exactly in package.json, and this file fails when an upgrade moves or reshapes what the
// patch relies on (names, arity, the fields it reads, how the verifiers take the functions),
// or when the patch no longer takes effect. The order matters and is kept: node:test runs
// these in sequence in a process of their own, and mailauth is loaded unpatched first.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const MAILAUTH = dirname(require.resolve('mailauth/package.json'));
const source = (file: string) => readFileSync(join(MAILAUTH, file), 'utf8');

type Resolver = (name: string, rrtype: string) => Promise<unknown>;
interface Tools {
  getPublicKey: (type: string, name: string, minBitLength: number | undefined, resolver: Resolver) => Promise<{ publicKey: string | KeyObject; rr: string }>;
  parseHeaders: (buf: Buffer) => unknown;
  patchedByTempInbox?: true;
}
interface Parser {
  state: string;
  stateBytes: number[];
  headerChunks: Buffer[];
  headers: unknown;
  processChunk(chunk: Buffer): Promise<void>;
  messageHeaders(headers: unknown): Promise<void>;
  nextChunk(chunk: Buffer): Promise<void>;
}
type ParserClass = { new (): Parser; prototype: Parser };

const tools = require('mailauth/lib/tools.js') as Tools;
const { MessageParser } = require('mailauth/lib/dkim/message-parser.js') as { MessageParser: ParserClass };
const original = { getPublicKey: tools.getPublicKey, parseHeaders: tools.parseHeaders, processChunk: MessageParser.prototype.processChunk };

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const RECORD = `v=DKIM1; k=rsa; p=${keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

/** What a MessageParser hands on for these chunks: the header block read, then the body's bytes. */
async function split(chunks: string[]): Promise<{ headers: unknown; body: string }> {
  const parser = new MessageParser();
  let headers: unknown;
  const body: Buffer[] = [];
  parser.messageHeaders = async (h) => void (headers = h);
  parser.nextChunk = async (c) => void body.push(Buffer.from(c));
  for (const chunk of chunks) await parser.processChunk(Buffer.from(chunk, 'binary'));
  return { headers, body: Buffer.concat(body).toString('binary') };
}

const SPLITS = [
  ['From: a@b.test\r\nSubj', 'ect: one\r\n two\r\n\r', '\nthe body\r\n'],
  ['From: a@b.test\nSubject: LF only\n', '\n', 'body\n'],
  ['X: y\r\n\r\n'],
  ['From: a@b.test\r\n', '\r\n'],
];

describe('mailauth as the patch expects it', () => {
  it('is the exact version package.json pins and the patch was written for', () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { dependencies: Record<string, string> };
    const installed = (require('mailauth/package.json') as { version: string }).version;
    assert.match(pkg.dependencies['mailauth'] ?? '', /^\d+\.\d+\.\d+$/, 'an exact version, no range');
    assert.equal(installed, pkg.dependencies['mailauth']);
    const patch = readFileSync(fileURLToPath(new URL('../../../src/mail/auth/mailauth-patches.ts', import.meta.url)), 'utf8');
    assert.ok(patch.includes(`mailauth (${installed}, pinned)`), 'the patch names the version it was checked against');
  });

  it('has the functions the patch replaces, with the arity and fields it reads', async () => {
    assert.equal(tools.patchedByTempInbox, undefined, 'loaded unpatched');
    assert.equal(typeof original.getPublicKey, 'function');
    assert.match(original.getPublicKey.toString(), /^async \(type, name, minBitLength, resolver\) =>/);
    assert.equal(typeof original.parseHeaders, 'function');
    assert.equal(original.parseHeaders.length, 1);
    assert.equal(original.processChunk.length, 1);
    assert.equal(typeof MessageParser.prototype.messageHeaders, 'function');
    assert.equal(typeof MessageParser.prototype.nextChunk, 'function');
    const fresh = new MessageParser();
    assert.deepEqual([fresh.state, fresh.stateBytes, fresh.headerChunks, fresh.headers], ['header', [], [], false]);
    // The key as mailauth builds it: PEM text, which the patch turns into a key object once.
    const read = await original.getPublicKey('DKIM', 'sel._domainkey.pass.test', undefined, async () => [[RECORD]]);
    assert.equal(typeof read.publicKey, 'string');
    assert.equal(read.rr, RECORD.replace(/\s+/g, ''));
  });

  it('copies them out of lib/tools.js when its modules load (why the patch is imported first)', () => {
    const copies = (file: string, name: string) => new RegExp(`const \\{[^}]*\\b${name}\\b[^}]*\\} = require\\('\\.\\./\\.\\./lib/tools'\\)`).test(source(file));
    assert.ok(copies('lib/dkim/dkim-verifier.js', 'getPublicKey'));
    assert.ok(copies('lib/arc/index.js', 'getPublicKey'));
    assert.ok(copies('lib/dkim/message-parser.js', 'parseHeaders'));
  });

  it('after the patch: each function replaced and in effect, with the same header block and body as mailauth\'s own', async () => {
    const before = await Promise.all(SPLITS.map(split));
    const verifier = require.resolve('mailauth/lib/dkim/dkim-verifier.js');
    assert.equal(require.cache[verifier], undefined, 'the DKIM verifier not loaded yet: it takes the patched getPublicKey');
    const patches = await import('../../../src/mail/auth/mailauth-patches.js');
    assert.equal(tools.patchedByTempInbox, true);
    assert.equal(tools.parseHeaders, patches.parseHeaders);
    assert.notEqual(tools.getPublicKey, original.getPublicKey);
    assert.notEqual(MessageParser.prototype.processChunk, original.processChunk);
    assert.deepEqual(await Promise.all(SPLITS.map(split)), before);

    // The key kept as an object, and the record still asked for each time.
    let asked = 0;
    const resolver: Resolver = async () => (asked++, [[RECORD]]);
    for (let i = 0; i < 2; i++) {
      const read = await tools.getPublicKey('DKIM', 'sel._domainkey.pass.test', undefined, resolver);
      assert.ok(read.publicKey instanceof KeyObject);
    }
    assert.equal(asked, 2);

    // DKIM, loaded after the patch, verifies with it.
    const { dkimSign } = require('mailauth/lib/dkim/sign.js') as { dkimSign: (m: Buffer, o: unknown) => Promise<{ signatures: string; errors: unknown[] }> };
    const { dkimVerify } = require('mailauth/lib/dkim/verify.js') as { dkimVerify: (m: Buffer, o: unknown) => Promise<{ results: { status: { result: string } }[] }> };
    const raw = Buffer.from('From: a@pass.test\r\nTo: b@example.org\r\nSubject: hi\r\n\r\nYour code is 482913.\r\n');
    const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' });
    const sig = await dkimSign(raw, { signTime: new Date(), signatureData: [{ signingDomain: 'pass.test', selector: 'sel', privateKey, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' }] });
    assert.deepEqual(sig.errors, []);
    asked = 0;
    const verdict = await dkimVerify(Buffer.concat([Buffer.from(sig.signatures), raw]), { resolver });
    assert.equal(verdict.results[0]?.status.result, 'pass');
    assert.equal(asked, 1, 'the record asked for once, not again for the key object');
    assert.ok(require.cache[verifier]);
  });
});
