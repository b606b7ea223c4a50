// Blocks: senders, sender domains and client IPs (or ranges) whose mail SMTP refuses at
// MAIL FROM with 550 5.7.1, on every node. Listed newest first; each can be removed.
import { useEffect, useState } from 'preact/hooks';
import type { AdminApi, Block, BlockKind } from './api.js';
import { when } from './api.js';
import type { Report } from './report.js';

const KINDS: { kind: BlockKind; label: string; example: string }[] = [
  { kind: 'sender', label: 'Sender address', example: 'alice@spam.example' },
  { kind: 'domain', label: 'Sender domain (and its subdomains)', example: 'spam.example' },
  { kind: 'ip', label: 'Client IP address or range', example: '198.51.100.0/24' },
];
const labelOf = (kind: BlockKind) => KINDS.find((k) => k.kind === kind)?.label ?? kind;

export function Blocks({ api, report }: { api: AdminApi; report: Report }) {
  const [blocks, setBlocks] = useState<Block[] | null>(null);
  const [kind, setKind] = useState<BlockKind>('sender');
  const [value, setValue] = useState('');
  const [note, setNote] = useState('');
  const load = () => api.blocks().then((r) => setBlocks(r.results), (err: unknown) => report.failed(err));
  useEffect(() => void load(), [api]);

  async function add(e: Event) {
    e.preventDefault();
    try {
      const block = await api.addBlock(kind, value.trim(), note.trim());
      setValue('');
      setNote('');
      report.done(`Blocked ${block.value}.`);
      await load();
    } catch (err) {
      report.failed(err);
    }
  }

  async function remove(block: Block) {
    try {
      await api.removeBlock(block.id);
      report.done(`Removed the block of ${block.value}.`);
      await load();
    } catch (err) {
      report.failed(err);
    }
  }

  return (
    <section id="blocks" aria-labelledby="blocks-title">
      <div class="section-head">
        <h2 id="blocks-title">Blocks</h2>
      </div>
      <p class="muted">Mail from a blocked sender, domain or client is refused at SMTP MAIL FROM with 550 5.7.1, on every node within a second.</p>
      <form class="new-block" onSubmit={add}>
        <fieldset>
          <legend>New block</legend>
          <label for="block-kind">Block</label>
          <select id="block-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as BlockKind)}>
            {KINDS.map((k) => (
              <option value={k.kind} key={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
          <label for="block-value">Value</label>
          <input
            id="block-value"
            required
            maxLength={320}
            placeholder={KINDS.find((k) => k.kind === kind)?.example}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            autocomplete="off"
          />
          <label for="block-note">Note (optional)</label>
          <input id="block-note" maxLength={200} value={note} onInput={(e) => setNote(e.currentTarget.value)} autocomplete="off" />
          <button type="submit" class="primary">
            Block
          </button>
        </fieldset>
      </form>
      {blocks && (
        <table class="blocks">
          <caption>{blocks.length === 0 ? 'Nothing is blocked.' : `${blocks.length} block${blocks.length === 1 ? '' : 's'}, newest first`}</caption>
          <thead>
            <tr>
              <th scope="col">Value</th>
              <th scope="col">Kind</th>
              <th scope="col">Note</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="sr">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {blocks.map((b) => (
              <tr key={b.id}>
                <th scope="row">{b.value}</th>
                <td>{labelOf(b.kind)}</td>
                <td>{b.note}</td>
                <td>{when(b.created_at)}</td>
                <td>
                  <button type="button" aria-label={`Remove the block of ${b.value}`} onClick={() => void remove(b)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
