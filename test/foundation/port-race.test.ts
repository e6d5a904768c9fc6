import net from 'node:net';
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
    mail = await withStage('mail capture (maildev)', ([smtpPort, uiPort]) => startMailCapture({ smtpPort, uiPort }), 2, pickPort);
    expect(picked[0]).toBe(taken);
    expect(picked.length).toBeGreaterThanOrEqual(4);
    expect([mail.smtpPort, mail.uiPort]).not.toContain(taken);
    expect((await fetch(mail.apiUrl)).status).toBe(200);
    expect(holder.listening).toBe(true);
  } finally {
    await mail?.stop();
    holder.close();
  }
});
