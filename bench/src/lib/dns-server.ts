// A local DNS server for the benches (dns2), on 127.0.0.1 with UDP and TCP on one
// port (an RSA-2048 DKIM key does not fit a 512-byte UDP answer; the resolver then
// asks again over TCP on the same port). `answer` gives a name's TXT records, or
// undefined for NXDOMAIN.
import dns2 from 'dns2';
import type { AddressInfo, Socket } from 'node:net';

const { Packet } = dns2;

export interface BenchDns {
  /** 127.0.0.1:<port>, as DNS_SERVERS takes it. */
  server: string;
  /** Questions answered so far. */
  readonly queries: number;
  close(): Promise<void>;
}

/** A TXT string as character-strings of at most 255 bytes (RFC 1035 §3.3.14). */
const chunks = (s: string): string[] => Array.from({ length: Math.max(1, Math.ceil(s.length / 255)) }, (_, i) => s.slice(i * 255, i * 255 + 255));

export async function startBenchDns(answer: (name: string) => string[] | undefined): Promise<BenchDns> {
  let queries = 0;
  const handle = (request: InstanceType<typeof Packet>, send: (response: InstanceType<typeof Packet>) => Promise<Buffer>) => {
    const [question] = request.questions;
    if (!question) return;
    queries++;
    const response = Packet.createResponseFromRequest(request);
    const txt = answer(question.name.toLowerCase().replace(/\.$/, ''));
    if (!txt) response.header.rcode = Packet.RCODE.NXDOMAIN;
    else if (question.type === Packet.TYPE.TXT) {
      for (const t of txt) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 300, data: chunks(t) } as never);
    }
    void send(response).catch(() => undefined);
  };
  for (let attempt = 0; ; attempt++) {
    const udp = dns2.createUDPServer((req, send) => handle(req, send as never));
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = dns2.createTCPServer((req, send) => handle(req, send as never));
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
      get queries() {
        return queries;
      },
      async close() {
        await new Promise<void>((resolve) => udp.close(() => resolve()));
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => tcp.close(() => resolve()));
      },
    };
  }
}
