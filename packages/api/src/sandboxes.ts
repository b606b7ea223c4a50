// Sandboxes (docs/api.md "Sandboxes"): an inbox that belongs to an SMTP login. POST
// /api/sandbox/token exchanges its name and password for a JWT of its address, with which
// every /api route of an address works on the sandbox's mail; /api/sandbox/chaos sets the
// faults its own SMTP sessions get. The operators create, list, rotate and delete sandboxes
// under /api/admin/sandboxes (ADMIN_TOKEN).
import { Type, type Static } from '@sinclair/typebox';

const name = Type.String({ maxLength: 256, description: 'The SMTP login: 1-64 characters of a-z, 0-9, ".", "_", "-" (case-insensitive).' });
const password = Type.String({ maxLength: 1024, description: 'The SMTP password (1-1024 characters, no control characters).' });

export const SandboxTokenBody = Type.Object(
  { name: Type.Optional(name), password: Type.Optional(password) },
  { additionalProperties: true, description: 'The name and password; or send them with HTTP Basic authentication and no body.' },
);
export type SandboxTokenBody = Static<typeof SandboxTokenBody>;

export const SandboxTokenResponse = Type.Object({
  name: Type.String(),
  address: Type.String({ description: '<name>@sandbox.invalid: the address that holds the sandbox\'s mail (no SMTP client can send to it).' }),
  jwt: Type.String({ description: 'Bearer token of that address for every /api route; also set as the `jwt` cookie.' }),
});
export type SandboxTokenResponse = Static<typeof SandboxTokenResponse>;

export const ChaosTrigger = Type.Object({
  errorCode: Type.Integer({ minimum: 400, maximum: 599, description: 'The SMTP reply code answered.' }),
  probability: Type.Number({ minimum: 0, maximum: 100, description: 'Percent of the commands of that stage that get it.' }),
});

export const ChaosSettings = Type.Object(
  {
    authentication: Type.Optional(ChaosTrigger),
    sender: Type.Optional(ChaosTrigger),
    recipient: Type.Optional(ChaosTrigger),
    data: Type.Optional(ChaosTrigger),
    delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 30_000, description: 'Pause before each reply of the sandbox\'s sessions.' })),
    disconnectProbability: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Percent of commands after which the connection is closed without a reply.' })),
  },
  { description: "Faults the sandbox's own authenticated SMTP sessions get (AUTH, MAIL FROM, RCPT TO, end of DATA); {} for none." },
);
export type ChaosSettings = Static<typeof ChaosSettings>;

export const SandboxInfo = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  address: Type.String(),
  max_mails: Type.Integer({ description: 'Mails kept; past it the oldest are removed (0: no limit).' }),
  max_bytes: Type.Integer({ description: 'Bytes kept; past it the oldest mails are removed (0: no limit).' }),
  retention_ms: Type.Integer({ description: 'How long its mail is kept.' }),
  chaos: ChaosSettings,
  created_at: Type.String({ format: 'date-time' }),
});
export type SandboxInfo = Static<typeof SandboxInfo>;

export const AdminSandboxesResponse = Type.Object({ results: Type.Array(SandboxInfo) });
export type AdminSandboxesResponse = Static<typeof AdminSandboxesResponse>;

export const AdminNewSandboxBody = Type.Object(
  {
    name,
    password,
    max_mails: Type.Optional(Type.Integer({ minimum: 0, description: 'Default SANDBOX_MAX_MAILS.' })),
    max_bytes: Type.Optional(Type.Integer({ minimum: 0, description: 'Default SANDBOX_MAX_BYTES.' })),
    retention_ms: Type.Optional(Type.Integer({ minimum: 1, description: 'Default SANDBOX_RETENTION.' })),
  },
  { additionalProperties: true, description: 'Creates the sandbox; one of that name gets this password and these limits (its mail is kept).' },
);
export type AdminNewSandboxBody = Static<typeof AdminNewSandboxBody>;

export const AdminSandboxPasswordBody = Type.Object({ password }, { additionalProperties: true });
export type AdminSandboxPasswordBody = Static<typeof AdminSandboxPasswordBody>;
