// ARIA tabs (https://www.w3.org/WAI/ARIA/apg/patterns/tabs/): arrow keys, Home and End
// move between the enabled tabs and select them; only the selected one is in the tab order.
import type { ComponentChildren } from 'preact';

export interface Tab<K extends string> {
  key: K;
  label: string;
  disabled?: boolean;
}

export function ViewTabs<K extends string>(props: { tabs: Tab<K>[]; selected: K; onSelect: (key: K) => void; label: string; idPrefix: string; children: ComponentChildren }) {
  const { tabs, selected, onSelect, label, idPrefix, children } = props;
  const enabled = tabs.filter((t) => !t.disabled);
  const move = (e: KeyboardEvent) => {
    const at = enabled.findIndex((t) => t.key === selected);
    const to = e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? enabled.length - 1 : undefined;
    if (to === undefined) return;
    e.preventDefault();
    const next = enabled[(to + enabled.length) % enabled.length]!;
    onSelect(next.key);
    (document.getElementById(`${idPrefix}-tab-${next.key}`) as HTMLElement | null)?.focus();
  };
  return (
    <>
      <div class="tabs" role="tablist" aria-label={label} onKeyDown={move}>
        {tabs.map((t) => (
          <button
            key={t.key}
            id={`${idPrefix}-tab-${t.key}`}
            type="button"
            role="tab"
            aria-selected={selected === t.key}
            aria-controls={`${idPrefix}-panel`}
            tabIndex={selected === t.key ? 0 : -1}
            class={selected === t.key ? 'on' : ''}
            disabled={t.disabled}
            onClick={() => onSelect(t.key)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div id={`${idPrefix}-panel`} role="tabpanel" aria-labelledby={`${idPrefix}-tab-${selected}`}>
        {children}
      </div>
    </>
  );
}
