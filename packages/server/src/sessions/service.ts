// Browser sessions (docs/api.md "Authentication"; docs/decisions.md "Sessions"): state lives in
// the store, the cookie carries only a random id. Ids are minted here, never
// taken from a client, so a client-chosen id is never adopted.
import { randomBytes } from 'node:crypto';
import type { SessionListing } from '@temp-inbox/api';
import { forbidden, unauthorized } from '../domain/errors.js';
import type { AddressRecord, Store } from '../storage/store.js';

export const SESSION_MAX_ADDRESSES = 3;
export const SESSION_LIFETIME_SECONDS = 30 * 24 * 3600;

/** Browser sessions: the addresses a session_id cookie holds, and which one is active. */
export interface SessionService {
  /** Adds a new address to the caller's session (or to a new one); returns the session id to set. */
  attach(id: string | undefined, address: AddressRecord): Promise<string>;
  list(id: string | undefined): Promise<{ addresses: { address: string; createdAt: number }[]; activeAddress: string }>;
  /** Makes an address of the session active under a fresh session id. */
  switchTo(id: string | undefined, address: string): Promise<{ sessionId: string; address: AddressRecord }>;
  logout(id: string | undefined): Promise<void>;
}

const newId = () => randomBytes(24).toString('base64url');

export function createSessionService(store: Store, now: () => number = Date.now): SessionService {
  /** A live session: each renewal (new address, switch) gives it the cookie's full lifetime again. */
  async function liveSession(id: string | undefined) {
    const session = id ? await store.getSession(id) : undefined;
    return session && now() - session.createdAt <= SESSION_LIFETIME_SECONDS * 1000 ? session : undefined;
  }

  async function requireSession(id: string | undefined) {
    const session = await liveSession(id);
    if (!session) throw unauthorized('Missing or invalid session cookie.');
    return session;
  }

  return {
    /** Adds a new address to the caller's session (or to a new one); returns the session id to set. */
    async attach(id: string | undefined, address: AddressRecord): Promise<string> {
      let sessionId = (await liveSession(id))?.id;
      if (!sessionId) {
        sessionId = newId();
        await store.createSession(sessionId, now());
      }
      await store.addSessionAddress(sessionId, address.id, now(), SESSION_MAX_ADDRESSES);
      return sessionId;
    },

    async list(id: string | undefined): Promise<SessionListing> {
      const session = await requireSession(id);
      const members = await store.listSessionAddresses(session.id);
      const active = members.find((m) => m.addressId === session.activeAddressId) ?? members.at(-1);
      return { addresses: members.map((m) => ({ address: m.address, createdAt: m.createdAt })), activeAddress: active?.address ?? '' };
    },

    /** Makes an address of the session active under a fresh session id. */
    async switchTo(id: string | undefined, address: string): Promise<{ sessionId: string; address: AddressRecord }> {
      const session = await requireSession(id);
      const wanted = address.trim().toLowerCase();
      const member = (await store.listSessionAddresses(session.id)).find((m) => m.address === wanted);
      if (!member) throw forbidden('That address is not in this session.');
      const sessionId = newId();
      if (!(await store.rotateSession(session.id, sessionId, member.addressId, now()))) throw unauthorized('Missing or invalid session cookie.');
      return { sessionId, address: { id: member.addressId, address: member.address, createdAt: member.createdAt } };
    },

    async logout(id: string | undefined): Promise<void> {
      const session = await requireSession(id);
      await store.deleteSession(session.id);
    },
  };
}
