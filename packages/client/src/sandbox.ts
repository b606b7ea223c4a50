// A sandbox (docs/api.md "Sandboxes"): an inbox that belongs to an SMTP login. Its handle is
// the same Inbox an address's is; `inbox.sandbox` adds what only a sandbox has: its name and
// its chaos settings (faults its own SMTP sessions get).
import { path, routes } from './api-routes.js';
import type { ChaosSettings, SandboxInfo } from './api-types.js';

export interface OpenSandboxOptions {
  /** The SMTP login. */
  name: string;
  password: string;
  /** As openInbox's: waits consider mail with an id above it (default: the newest when opened). */
  since?: number;
}

/** What a sandbox's handle needs of the client. */
interface Caller {
  json<T>(method: string, path: string, opts: { token?: string; body?: unknown }): Promise<T | undefined>;
}

export class InboxSandbox {
  readonly name: string;
  readonly #client: Caller;
  readonly #token: string;

  constructor(client: Caller, name: string, token: string) {
    this.#client = client;
    this.name = name;
    this.#token = token;
  }

  /** The sandbox as the service has it: limits, chaos (GET /api/sandbox). */
  async info(): Promise<SandboxInfo> {
    return (await this.#client.json<SandboxInfo>('GET', path(routes.sandbox), { token: this.#token }))!;
  }

  async chaos(): Promise<ChaosSettings> {
    return (await this.#client.json<ChaosSettings>('GET', path(routes.sandboxChaos), { token: this.#token }))!;
  }

  /** Replaces the sandbox's chaos settings whole ({} turns every fault off); resolves with them as stored. */
  async setChaos(chaos: ChaosSettings): Promise<ChaosSettings> {
    return (await this.#client.json<ChaosSettings>('PUT', path(routes.sandboxChaos), { token: this.#token, body: chaos }))!;
  }
}
