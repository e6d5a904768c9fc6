import net from 'node:net';
import { reservePorts } from '../../scripts/platform/children';
import { startMailCapture, RunningMailCapture } from '../../scripts/platform/mail-capture';
import { freePort } from '../support/slots';
import { withStage } from '../support/stages';

/**
 * A port picked free and bound seconds later can be taken meanwhile by another process (a CI run failed so).
 * The harness's answer: a component that cannot bind is started again on fresh ports. Here another process
 * holds the very first port the harness picks, and the component still comes up, on other ports.
 */
test('a port taken between the pick and the bind: the component is started again on fresh ports and comes up; the holder keeps its port', async () => {
  const holder = net.createServer();
  const taken = await freePort();
  await new Promise<void>((resolve) => holder.listen(taken, '127.0.0.1', resolve));
  const picked: number[] = [];
  // The harness's first pick is the held port, as if another process had taken it since; then fresh ones.
  const pickPort = async () => {
    const port = picked.length === 0 ? taken : await freePort();
    picked.push(port);
    return port;
  };
  let mail: RunningMailCapture | undefined;
  try {
    mail = await withStage('mail capture (Mailpit)', ([smtpPort, uiPort]) => startMailCapture({ smtpPort, uiPort }), 2, pickPort);
    expect(picked[0]).toBe(taken);
    expect(picked.length).toBeGreaterThanOrEqual(4);
    expect([mail.smtpPort, mail.uiPort]).not.toContain(taken);
    expect((await fetch(`${mail.apiUrl}/messages`)).status).toBe(200);
    expect(holder.listening).toBe(true);
  } finally {
    await mail?.stop();
    holder.close();
  }
});

/**
 * `npm start` checks its configured ports free, then binds the API's only after Temporal and its Web UI are
 * up. A CI run had the UI draw that very port, and its /healthz answered for the API. Reserved, it is never drawn.
 */
test("a port the start's configuration names is reserved: no later draw of the same process gets it", async () => {
  // Drawn by the kernel, not by freePort (which keeps what it hands out): as a port of the configuration is.
  const configured = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  reservePorts([configured]);
  await expect(freePort({ from: configured, to: configured })).rejects.toThrow(/no free loopback port/);
  const other = await freePort({ from: configured, to: configured + 1 }).catch(() => null);
  if (other !== null) expect(other).toBe(configured + 1);
});
