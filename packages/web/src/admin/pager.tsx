// Newer/Older buttons under a paged table, newest first.
export function Pager({ offset, size, count, onMove }: { offset: number; size: number; count: number; onMove: (offset: number) => void }) {
  return (
    <div class="pager">
      <button type="button" disabled={offset === 0} onClick={() => onMove(Math.max(0, offset - size))}>
        Newer
      </button>
      <button type="button" disabled={offset + size >= count} onClick={() => onMove(offset + size)}>
        Older
      </button>
    </div>
  );
}
