// Cloudflare Turnstile, shown only when the server has TURNSTILE_SITE_KEY set: its
// token is sent as cf_token with POST /api/new_address.
import { useEffect, useRef } from 'preact/hooks';
import { s } from './strings.js';

interface TurnstileApi {
  render(el: HTMLElement, opts: { sitekey: string; callback: (token: string) => void; 'expired-callback': () => void }): string;
  remove(id: string): void;
}
declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

const SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';
let loading: Promise<TurnstileApi> | undefined;

function load(): Promise<TurnstileApi> {
  loading ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = SCRIPT;
    script.async = true;
    script.onload = () => (window.turnstile ? resolve(window.turnstile) : reject(new Error(s.challengeDidNotLoad)));
    script.onerror = () => {
      loading = undefined;
      reject(new Error(s.challengeCouldNotLoad));
    };
    document.head.appendChild(script);
  });
  return loading;
}

export function Turnstile(props: { siteKey: string; onToken: (token: string) => void }) {
  const el = useRef<HTMLDivElement>(null);
  const onToken = useRef(props.onToken);
  onToken.current = props.onToken;
  useEffect(() => {
    let id: string | undefined;
    let api: TurnstileApi | undefined;
    let gone = false;
    load().then(
      (t) => {
        if (gone || !el.current) return;
        api = t;
        id = t.render(el.current, { sitekey: props.siteKey, callback: (token) => onToken.current(token), 'expired-callback': () => onToken.current('') });
      },
      () => undefined,
    );
    return () => {
      gone = true;
      if (api && id) api.remove(id);
    };
  }, [props.siteKey]);
  return <div class="turnstile" ref={el} />;
}
