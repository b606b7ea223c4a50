// The facts the parse worker gathers for the attachment policy (mail/parse/attachment-facts.ts)
// and the policy's verdict on them (mail/attachment-policy.ts): extensions as Windows reads
// them, the first bytes of PE and ELF programs, and the bound on distinct extensions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { attachmentFacts, executableKind, extensionOf, MAX_EXTENSIONS } from '../../../src/mail/parse/attachment-facts.js';
import { DEFAULT_REFUSED_EXTENSIONS, refusalOf, type AttachmentPolicy } from '../../../src/mail/attachment-policy.js';

const policy: AttachmentPolicy = { maxBytes: 0, refusedExtensions: new Set(DEFAULT_REFUSED_EXTENSIONS), refuseExecutables: true };
const part = (filename: string | undefined, bytes: Buffer | string = 'text') => ({ filename, bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes });

describe('attachment facts', () => {
  it('reads the extension after the last dot, lower-cased, trailing dots and spaces dropped', () => {
    assert.equal(extensionOf('Setup.EXE'), 'exe');
    assert.equal(extensionOf('invoice.pdf.js'), 'js');
    assert.equal(extensionOf('run.bat. . '), 'bat');
    assert.equal(extensionOf('README'), '');
    assert.equal(extensionOf('.hidden'), 'hidden');
    assert.equal(extensionOf(`a.${'x'.repeat(40)}`), 'x'.repeat(16));
  });

  it('knows PE and ELF by their first bytes, nothing else', () => {
    assert.equal(executableKind(Buffer.from('MZ\x90\x00', 'latin1')), 'pe');
    assert.equal(executableKind(Buffer.from([0x7f, 0x45, 0x4c, 0x46])), 'elf');
    for (const head of [Buffer.from('%PDF'), Buffer.from('M'), Buffer.from([0x7f, 0x45, 0x4c]), Buffer.alloc(0), Buffer.from('mz..')]) assert.equal(executableKind(head), undefined);
  });

  it('keeps the largest size, each extension once with its first name, and at most MAX_EXTENSIONS of them', () => {
    const facts = attachmentFacts([part('a.txt', 'xx'), part('b.TXT', 'xxxxx'), part(undefined, 'y'), part('c.pdf', 'z')]);
    assert.equal(facts.count, 4);
    assert.deepEqual(facts.largest, { bytes: 5, filename: 'b.TXT' });
    assert.deepEqual(facts.extensions, [{ ext: 'txt', filename: 'a.txt' }, { ext: 'pdf', filename: 'c.pdf' }]);
    assert.equal(facts.extensionsCut, false);
    const many = attachmentFacts(Array.from({ length: MAX_EXTENSIONS + 1 }, (_, i) => part(`f.e${i}`)));
    assert.equal(many.extensions.length, MAX_EXTENSIONS);
    assert.equal(many.extensionsCut, true);
  });

  it('the policy: size first, then names, then content; nothing without attachments or a policy', () => {
    const facts = attachmentFacts([part('big.bin', Buffer.alloc(50)), part('x.exe'), part('y.pdf', Buffer.from('MZ..'))]);
    assert.equal(refusalOf({ ...policy, maxBytes: 49 }, facts)?.reason, 'size');
    assert.equal(refusalOf(policy, facts)?.reason, 'extension');
    assert.equal(refusalOf({ ...policy, refusedExtensions: new Set() }, facts)?.reason, 'content');
    assert.equal(refusalOf({ ...policy, refusedExtensions: new Set(), refuseExecutables: false }, facts), undefined);
    assert.equal(refusalOf(undefined, facts), undefined);
    assert.equal(refusalOf(policy, attachmentFacts([])), undefined);
    // A name cannot break the reply: quotes and line ends are replaced.
    const odd = refusalOf(policy, attachmentFacts([part('a"b\r\nc.exe')]));
    assert.equal(odd?.message, 'Message refused: attachment "a_b__c.exe" is of a type this server does not accept (.exe)');
  });
});
