// A real DNS server for tests (dns2), on 127.0.0.1 with UDP and TCP on one free port
// (a DKIM key of 2048 bits does not fit a 512-byte UDP answer, and the resolver then
// asks again over TCP on the same port). It answers from a zone the test fills in:
// NXDOMAIN for a name it does not hold, an empty answer for a type the name lacks,
// SERVFAIL for a name in `failing`, and nothing at all for a name in `silent` (a name
// server that never answers).
import dns2 from 'dns2';
import type { AddressInfo, Socket } from 'node:net';

// DNS reply codes (RFC 1035 4.1.1): dns2 3.0's types do not declare its Packet.RCODE.
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

const { Packet } = dns2;

export interface ZoneRecords {
  TXT?: string[];
  A?: string[];
  MX?: { exchange: string; priority: number }[];
}

export interface TestDns {
  /** e.g. 127.0.0.1:53531, as DNS_SERVERS takes it. */
  server: string;
  port: number;
  /** Lower-case names without the final dot. */
  zone: Map<string, ZoneRecords>;
  /** Names asked for and never answered. */
  silent: Set<string>;
  /** Names answered SERVFAIL (the name server failed). */
  failing: Set<string>;
  /** Every question asked, as "TYPE name". */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([name, n]) => [n as number, name]));

/** A TXT string as character-strings of at most 255 bytes (RFC 1035 §3.3.14). */
function chunks(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += 255) out.push(s.slice(i, i + 255));
  return out.length ? out : [''];
}

/** `answer`: the records of a name the zone does not hold (a bench's names made up per mail), or undefined for NXDOMAIN. */
export async function startTestDns(opts: { answer?: (name: string) => ZoneRecords | undefined } = {}): Promise<TestDns> {
  const zone = new Map<string, ZoneRecords>();
  const silent = new Set<string>();
  const failing = new Set<string>();
  const queries: string[] = [];
  const handle = (request: InstanceType<typeof Packet>, send: (response: InstanceType<typeof Packet>) => Promise<Buffer>) => {
    const [question] = request.questions;
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const type = TYPE_NAMES.get(question.type) ?? String(question.type);
    queries.push(`${type} ${name}`);
    if (silent.has(name)) return;
    const response = Packet.createResponseFromRequest(request);
    const records = zone.get(name) ?? opts.answer?.(name);
    if (failing.has(name)) response.header.rcode = RCODE.SERVFAIL;
    else if (!records) response.header.rcode = RCODE.NXDOMAIN;
    else if (type === 'TXT') for (const txt of records.TXT ?? []) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 300, data: chunks(txt) } as never);
    else if (type === 'A') for (const address of records.A ?? []) response.answers.push({ name: question.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 300, address } as never);
    else if (type === 'MX') for (const mx of records.MX ?? []) response.answers.push({ name: question.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 300, ...mx } as never);
    void send(response).catch(() => undefined);
  };
  for (let attempt = 0; ; attempt++) {
    const udp = dns2.createUDPServer((req, send) => handle(req, send as never));
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = dns2.createTCPServer((req, send) => handle(req, send as never));
    // The resolver may keep its TCP connection open; close() ends it rather than wait for it.
    const sockets = new Set<Socket>();
    tcp.on('connection', (s: Socket) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    const bound = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) {
      udp.close();
      if (attempt < 20) continue;
      throw new Error('no port free for both UDP and TCP');
    }
    return {
      server: `127.0.0.1:${(tcp.address() as AddressInfo).port}`,
      port,
      zone,
      silent,
      failing,
      queries,
      async close() {
        await new Promise<void>((resolve) => udp.close(() => resolve()));
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => tcp.close(() => resolve()));
      },
    };
  }
}
