// Desktop notifications of new mail, when the reader has asked for them: the browser's
// permission is requested only from a click on the header's bell (never on load), the
// choice is kept in localStorage, and a notification is shown only while the page is
// hidden. It carries the sender and the subject, never the mail's text.
import { useState } from 'preact/hooks';
import { s } from './strings.js';

const KEY = 'temp-inbox.notifications';

export type NotifyState = 'unsupported' | 'off' | 'on' | 'blocked';

const supported = () => typeof window !== 'undefined' && 'Notification' in window;

function saved(): boolean {
  try {
    return localStorage.getItem(KEY) === 'on';
  } catch {
    return false;
  }
}

function save(on: boolean): void {
  try {
    localStorage.setItem(KEY, on ? 'on' : 'off');
  } catch {
    // Storage refused (private mode, quota): the choice lasts for this page only.
  }
}

/** What the bell shows: asked for and allowed, not asked for, or refused by the browser. */
export function notifyState(): NotifyState {
  if (!supported()) return 'unsupported';
  if (Notification.permission === 'denied') return 'blocked';
  return saved() && Notification.permission === 'granted' ? 'on' : 'off';
}

/** The bell's state and its click: turning on asks the browser (this is the only place that does). */
export function useNotifications(): [NotifyState, () => Promise<void>] {
  const [state, setState] = useState<NotifyState>(notifyState);
  const toggle = async () => {
    if (notifyState() === 'on') {
      save(false);
    } else {
      const permission = await Notification.requestPermission();
      save(permission === 'granted');
      if (permission === 'denied') {
        setState('blocked');
        throw new Error(s.notifyBlocked);
      }
    }
    setState(notifyState());
  };
  return [state, toggle];
}

/**
 * Shows a new mail as a notification when asked for and the page is hidden. A click
 * brings the tab forward and calls `onOpen`. The mail's uuid is the tag, so two tabs of
 * the same inbox show one notification.
 */
export function notifyNewMail(mail: { uuid: string; from: string; subject: string }, onOpen: () => void): void {
  if (!document.hidden || notifyState() !== 'on') return;
  const n = new Notification(mail.from, { body: mail.subject, tag: mail.uuid, icon: '/favicon.svg' });
  n.onclick = () => {
    window.focus();
    onOpen();
    n.close();
  };
}
