// The comparison servers, each in its own process.
import { join } from 'node:path';
import { CHILDREN_DIR, MAILDEV_BIN } from './paths.js';
import { freePort, makeTempDir, removeTempDir, startChild, waitForOutput, type Child } from './procs.js';
import { untilGreets } from './smtp-client.js';

export interface Baseline {
  child: Child;
  port: number;
  stop(): Promise<void>;
}

export async function startBareHttp(routes: { prefix: string; file: string; contentType: string }[]): Promise<Baseline> {
  const child = startChild({ name: 'bare-http', tsx: true, args: [join(CHILDREN_DIR, 'bare-http.ts'), JSON.stringify(routes)] });
  const m = await waitForOutput(child, /READY (\d+)/).catch(async (err) => {
    await child.stop();
    throw err;
  });
  return { child, port: Number(m[1]), stop: () => child.stop() };
}

export async function startSmtpSink(): Promise<Baseline> {
  const child = startChild({ name: 'smtp-sink', tsx: true, args: [join(CHILDREN_DIR, 'smtp-sink.ts')] });
  const m = await waitForOutput(child, /READY (\d+)/).catch(async (err) => {
    await child.stop();
    throw err;
  });
  return { child, port: Number(m[1]), stop: () => child.stop() };
}

/** The durable sink (children/durable-sink.ts): append + fdatasync with group commit, in a temp dir beside the servers' data. */
export async function startDurableSink(): Promise<Baseline> {
  const dir = makeTempDir('durable-sink');
  const child = startChild({ name: 'durable-sink', tsx: true, args: [join(CHILDREN_DIR, 'durable-sink.ts'), dir] });
  const m = await waitForOutput(child, /READY (\d+)/).catch(async (err) => {
    await child.stop();
    removeTempDir(dir);
    throw err;
  });
  return {
    child,
    port: Number(m[1]),
    stop: async () => {
      await child.stop();
      removeTempDir(dir);
    },
  };
}

/** MailDev as its README starts it (in-memory store, web UI on), bound to loopback. */
export async function startMailDev(): Promise<Baseline & { webPort: number }> {
  const port = await freePort();
  const webPort = await freePort();
  const child = startChild({
    name: 'maildev',
    args: [MAILDEV_BIN, '--smtp', String(port), '--web', String(webPort), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1'],
  });
  try {
    await waitForOutput(child, /Press Ctrl\+C to stop|SMTP Server/, 60_000);
    // Ready when it greets over SMTP.
    await untilGreets(port, 100, 100, 'MailDev');
  } catch (err) {
    await child.stop();
    throw err;
  }
  return { child, port, webPort, stop: () => child.stop() };
}
