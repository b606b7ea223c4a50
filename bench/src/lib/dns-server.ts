// A real DNS server for the auth-ingest bench (dns2), on 127.0.0.1 with UDP and TCP on
// one free port (a DKIM key of 2048 bits does not fit a 512-byte UDP answer, and the
// resolver then asks again over TCP on the same port). It answers TXT questions from
// `answer` (the bench's names are made up per mail): NXDOMAIN for a name it has no
// records for, an empty answer for any other type.
import dns2 from 'dns2';
import type { AddressInfo, Socket } from 'node:net';

// DNS reply code (RFC 1035 4.1.1): dns2 3.0's types do not declare its Packet.RCODE.
const NXDOMAIN = 3;

const { Packet } = dns2;

export interface BenchDns {
  /** e.g. 127.0.0.1:53531, as DNS_SERVERS takes it. */
  server: string;
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

/** `answer`: the TXT records of a lower-case name without the final dot, or undefined for NXDOMAIN. */
export async function startBenchDns(answer: (name: string) => string[] | undefined): Promise<BenchDns> {
  const queries: string[] = [];
  const handle = (request: InstanceType<typeof Packet>, send: (response: InstanceType<typeof Packet>) => Promise<Buffer>) => {
    const [question] = request.questions;
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const type = TYPE_NAMES.get(question.type) ?? String(question.type);
    queries.push(`${type} ${name}`);
    const response = Packet.createResponseFromRequest(request);
    const records = answer(name);
    if (!records) response.header.rcode = NXDOMAIN;
    else if (type === 'TXT') for (const txt of records) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 300, data: chunks(txt) } as never);
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
      queries,
      async close() {
        await new Promise<void>((resolve) => udp.close(() => resolve()));
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => tcp.close(() => resolve()));
      },
    };
  }
}
