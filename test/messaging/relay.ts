import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface TestRelay {
  port: number;
  /** Every recipient the relay accepted a message for, in order, across its lives. */
  received: string[];
  /** When each of `received` arrived (Date.now()), in the same order. */
  receivedAt: number[];
  /** Closes the relay and cuts the connections the platform's pool holds: what a relay that goes away does. */
  close(): Promise<void>;
  /** Opens it again on the same port. */
  reopen(): Promise<void>;
  /** Resolves once a message for a recipient `holds` names has arrived whole (and is never answered). */
  held: Promise<string>;
}

/**
 * A real SMTP relay on loopback (the `smtp-server` package) that records whom it accepted mail for, and
 * refuses with 550 the recipients `refuses` names (a permanent failure for that address). A message for a
 * recipient `holds` names is taken whole and recorded, and then never answered: the sender cannot know
 * whether it went. With `refusesSenders`, it refuses every envelope sender with 553, quoting it, as Postfix does.
 */
export async function startRelay(
  args: { port?: number; refuses?: (address: string) => boolean; holds?: (address: string) => boolean; refusesSenders?: boolean } = {},
): Promise<TestRelay> {
  const received: string[] = [];
  const receivedAt: number[] = [];
  let heldOne: (address: string) => void = () => undefined;
  const held = new Promise<string>((resolve) => (heldOne = resolve));
  let server: SMTPServer | null = null;
  const open = async (port: number): Promise<number> => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      closeTimeout: 100,
      onMailFrom: (address, _session, callback) => {
        if (!args.refusesSenders) return callback();
        const refusal = new Error(`5.7.1 <${address.address}>: Sender address rejected: not owned by user`) as Error & { responseCode: number };
        refusal.responseCode = 553;
        callback(refusal);
      },
      onRcptTo: (address, _session, callback) => {
        if (args.refuses?.(address.address)) {
          const refusal = new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`) as Error & { responseCode: number };
          refusal.responseCode = 550;
          return callback(refusal);
        }
        callback();
      },
      onData: (stream, session, callback) => {
        stream.on('data', () => undefined);
        stream.on('end', () => {
          const recipients = session.envelope.rcptTo.map((to) => to.address);
          received.push(...recipients);
          receivedAt.push(...recipients.map(() => Date.now()));
          const heldFor = recipients.find((to) => args.holds?.(to));
          if (heldFor) return heldOne(heldFor);
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    return (server!.server.address() as AddressInfo).port;
  };
  const port = await open(args.port ?? 0);
  return {
    port,
    received,
    receivedAt,
    held,
    close: async () => {
      const closing = server;
      server = null;
      if (!closing) return;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        for (const connection of (closing as unknown as { connections: Set<{ _socket?: { destroy(): void } }> }).connections) connection._socket?.destroy();
      });
    },
    reopen: async () => {
      await open(port);
    },
  };
}
