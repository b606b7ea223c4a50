// A value to copy with one click (a verification code, the address), saying
// "Copied" where it was clicked and to screen readers.
import { useEffect, useState } from 'preact/hooks';
import { s } from './strings.js';

const SHOWN_MS = 1500;

/** `text`: what the button says, when not the value itself (the address's "Copy"). */
export function CopyChip(props: { value: string; label?: string; class?: string; text?: string; title?: string }) {
  const { value, label, text } = props;
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), SHOWN_MS);
    return () => clearTimeout(t);
  }, [copied]);
  return (
    <button
      type="button"
      class={`${props.class ?? 'code'}${copied ? ' copied' : ''}`}
      title={props.title ?? s.copyValue(label ?? value)}
      onClick={() =>
        void navigator.clipboard?.writeText(value).then(
          () => setCopied(true),
          () => undefined,
        )
      }
    >
      {text ?? value}
      <span class="copy-state" aria-live="polite">
        {copied ? s.copied : ''}
      </span>
    </button>
  );
}
