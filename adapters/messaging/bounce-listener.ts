import { AddressInfo } from 'node:net';
import { SMTPServer, SMTPServerAddress } from 'smtp-server';

export interface RunningBounceListener {
  port: number;
  close(): Promise<void>;
}

/** The most a report may weigh: a report quotes at most the original's headers, or a short message. */
const MAX_REPORT_BYTES = 1024 * 1024;
/** Reports name one recipient (the message's envelope sender); a few are allowed. */
const MAX_RECIPIENTS = 5;
/** Connections at once: the mail systems beside the platform, not the world. */
const MAX_CLIENTS = 50;
/** Connections at once from one address: one slow or hostile source cannot take every place. */
const MAX_CLIENTS_PER_ADDRESS = 10;
/** A connection that says nothing for this long is closed: a mail system sends its report in seconds. */
const IDLE_TIMEOUT_MS = 30000;

const refusal = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

/**
 * The inbound SMTP listener delivery and complaint reports come to. It takes mail only for the addresses
 * `accepts` says are ours (anything else is 550: it relays nothing), no login, no TLS, at most 1 MiB kept
 * of a message, 50 connections at once and 10 from one address, each closed after 30 s of silence, and
 * answers 250 only once `take` has recorded the message: a 451 while it cannot (the database away) makes
 * the sending mail system try again later, as SMTP does, so no report is lost.
 */
export async function startBounceListener(args: {
  host: string;
  port: number;
  accepts: (address: string) => boolean;
  take: (message: Buffer, recipients: string[]) => Promise<void>;
  onError: (error: Error) => void;
}): Promise<RunningBounceListener> {
  const perAddress = new Map<string, number>();
  const counted = new Set<string>();
  const server = new SMTPServer({
    banner: 'Opsflow delivery reports',
    // No reverse DNS: a lookup per connection lets a slow resolver, or a hostile one, hold each place longer.
    disableReverseLookup: true,
    socketTimeout: IDLE_TIMEOUT_MS,
    onConnect: (session, callback) => {
      const open = perAddress.get(session.remoteAddress) ?? 0;
      if (open >= MAX_CLIENTS_PER_ADDRESS) return callback(refusal(421, '4.7.0 Too many connections from your address; try again later'));
      perAddress.set(session.remoteAddress, open + 1);
      // Counted down once the connection closes, however it does.
      counted.add(session.id);
      callback();
    },
    onClose: (session) => {
      if (!counted.delete(session.id)) return;
      const open = (perAddress.get(session.remoteAddress) ?? 1) - 1;
      if (open > 0) perAddress.set(session.remoteAddress, open);
      else perAddress.delete(session.remoteAddress);
    },
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_REPORT_BYTES,
    // Past the limit the rest is refused as it arrives, not gathered first.
    rejectOversized: true,
    maxClients: MAX_CLIENTS,
    logger: false,
    closeTimeout: 1000,
    onRcptTo: (address: SMTPServerAddress, session, callback) => {
      if (!args.accepts(address.address)) return callback(refusal(550, '5.1.1 No such recipient here'));
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(refusal(452, '4.5.3 Too many recipients'));
      callback();
    },
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Nothing past the limit is kept, whatever the client goes on sending.
        if (bytes <= MAX_REPORT_BYTES) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (bytes > MAX_REPORT_BYTES || (stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) return callback(refusal(552, '5.3.4 Message too big'));
        args
          .take(
            Buffer.concat(chunks),
            session.envelope.rcptTo.map((to) => to.address),
          )
          .then(
            () => callback(),
            (error: Error) => {
              args.onError(error);
              callback(refusal(451, '4.3.0 Not recorded; try again later'));
            },
          );
      });
    },
  });
  server.on('error', (error) => args.onError(error));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(args.port, args.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
