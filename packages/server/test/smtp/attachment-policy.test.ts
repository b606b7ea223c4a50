// The attachment policy at DATA (docs/decisions.md "Attachment policy"), over real SMTP: a
// message passes, or is refused whole for an attachment over ATTACHMENT_MAX_BYTES (552
// 5.3.4), a refused file name extension or executable content (552 5.7.0), each with a
// sentence that says why, nothing stored, and counted per reason in /metrics. The worst case
// is measured in attachment-policy-worst-case.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { multipart, send } from '../helpers/attachment-mail.js';
import { createAddress, mailCount, request, startTestServer, type TestServer } from '../helpers/harness.js';

const METRICS = 'metrics-token-for-attachments';

const PE = Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00', 'latin1'), Buffer.alloc(200, 1)]);
const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(200, 2)]);
const PDF = Buffer.from('%PDF-1.4\n% a small document\n', 'latin1');

async function refusals(server: TestServer): Promise<Record<string, number>> {
  const text = (await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS}` } })).text;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^temp_inbox_smtp_attachments_refused_total\{reason="(\w+)"\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

describe('attachment policy at DATA (the defaults, and ATTACHMENT_MAX_BYTES=1000)', () => {
  let server: TestServer;
  let inbox: { address: string; jwt: string };
  before(async () => {
    server = await startTestServer({ ATTACHMENT_MAX_BYTES: '1000', METRICS_TOKEN: METRICS });
    inbox = await createAddress(server);
  });
  after(async () => server?.close());

  it('a message with ordinary attachments within the size passes and is stored', async () => {
    const res = await send(server, inbox.address, multipart([{ filename: 'report.pdf', content: PDF, type: 'application/pdf' }, { filename: 'notes.txt', content: Buffer.alloc(1000, 'a') }]));
    assert.equal(res.code, 250, res.text);
    assert.equal(await mailCount(server, inbox.jwt), 1);
  });

  it('an attachment over ATTACHMENT_MAX_BYTES: 552 5.3.4 naming it and the limit, nothing stored', async () => {
    const res = await send(server, inbox.address, multipart([{ filename: 'big.bin', content: Buffer.alloc(1001, 'b') }]));
    assert.equal(res.code, 552);
    assert.match(res.text, /^552 5\.3\.4 Message refused: attachment "big\.bin" is 1001 bytes, over this server's limit of 1000 bytes per attachment/);
    assert.equal(await mailCount(server, inbox.jwt), 1, 'nothing stored');
  });

  it('a refused extension, whatever its case or a trailing dot: 552 5.7.0 naming it, nothing stored', async () => {
    for (const filename of ['setup.exe', 'INVOICE.PDF.JS', 'run.bat.', 'screen.SCR']) {
      const res = await send(server, inbox.address, multipart([{ filename: 'fine.pdf', content: PDF }, { filename, content: Buffer.from('harmless text') }]));
      assert.equal(res.code, 552, `${filename}: ${res.text}`);
      assert.match(res.text, /^552 5\.7\.0 Message refused: attachment ".+" is of a type this server does not accept \(\.(exe|js|bat|scr)\)/, filename);
    }
    assert.equal(await mailCount(server, inbox.jwt), 1, 'nothing stored');
  });

  it('executable content under an innocent name (PE, ELF): 552 5.7.0 saying which, nothing stored', async () => {
    const pe = await send(server, inbox.address, multipart([{ filename: 'invoice.pdf', content: PE, type: 'application/pdf' }]));
    assert.equal(pe.code, 552, pe.text);
    assert.match(pe.text, /^552 5\.7\.0 Message refused: attachment "invoice\.pdf" is a Windows program \(PE\)/);
    const elf = await send(server, inbox.address, multipart([{ filename: 'photo.jpg', content: ELF, type: 'image/jpeg' }]));
    assert.equal(elf.code, 552, elf.text);
    assert.match(elf.text, /^552 5\.7\.0 Message refused: attachment "photo\.jpg" is a Linux program \(ELF\)/);
    assert.equal(await mailCount(server, inbox.jwt), 1, 'nothing stored');
  });

  it('counts each refusal by reason in /metrics', async () => {
    assert.deepEqual(await refusals(server), { size: 1, extension: 4, content: 2 });
  });
});

describe('attachment policy: ATTACHMENT_REFUSED_EXTENSIONS=none, ATTACHMENT_REFUSE_EXECUTABLES=false', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ATTACHMENT_REFUSED_EXTENSIONS: 'none', ATTACHMENT_REFUSE_EXECUTABLES: 'false' });
  });
  after(async () => server?.close());

  it('takes what the defaults refuse', async () => {
    const inbox = await createAddress(server);
    const res = await send(server, inbox.address, multipart([{ filename: 'setup.exe', content: PE }, { filename: 'tool', content: ELF }]));
    assert.equal(res.code, 250, res.text);
    assert.equal(await mailCount(server, inbox.jwt), 1);
  });
});
