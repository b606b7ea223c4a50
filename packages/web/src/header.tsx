// The page's header: the session's addresses, creating one, opening one made elsewhere.
import type { SessionListing, UiConfig } from './api.js';
import { CreateAddress } from './create-address.js';
import { CurrentAddress } from './current-address.js';
import type { Run } from './format.js';
import { useNotifications } from './notify.js';
import { OpenInbox, OpenSandbox } from './open-inbox.js';
import { s } from './strings.js';
import { WebhookPanel } from './webhook-panel.js';

/** Everything the page knows about the browser's session. */
export type Session = SessionListing | null;

export function Welcome() {
  return (
    <main class="welcome">
      <h2>{s.welcomeTitle}</h2>
      <p>{s.welcomeText}</p>
    </main>
  );
}

export function Header(props: { config: UiConfig; session: Session; busy: boolean; run: Run; reload: () => Promise<void> }) {
  const { config, session, busy, run, reload } = props;
  const [notify, toggleNotify] = useNotifications();
  return (
    <header>
      <h1>{s.appName}</h1>
      {session && <CurrentAddress session={session} busy={busy} run={run} reload={reload} notify={notify} toggleNotify={toggleNotify} />}
      {session && <WebhookPanel key={session.activeAddress} />}
      <CreateAddress config={config} session={session} busy={busy} run={run} reload={reload} />
      <OpenInbox busy={busy} run={run} reload={reload} />
      <OpenSandbox busy={busy} run={run} reload={reload} />
    </header>
  );
}
