import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { runToEnd, spawnLogged } from '../../scripts/platform/children';
import { freePort } from './slots';

const POSTFIX = '/usr/sbin/postfix';

export interface RunningPostfix {
  /** Where it takes mail by SMTP, on loopback. */
  smtpPort: number;
  /** Its mail log (every delivery, bounce and refusal). */
  maillog(): string;
  stop(): Promise<void>;
}

/** Postfix's services, each out of a chroot (the instance lives in a folder of its own), smtpd on `port`. */
const masterCf = (port: number) =>
  `127.0.0.1:${port} inet n - n - - smtpd
${[
  'pickup unix n - n 60 1 pickup',
  'cleanup unix n - n - 0 cleanup',
  'qmgr unix n - n 300 1 qmgr',
  'rewrite unix - - n - - trivial-rewrite',
  'bounce unix - - n - 0 bounce',
  'defer unix - - n - 0 bounce',
  'trace unix - - n - 0 bounce',
  'verify unix - - n - 1 verify',
  'flush unix n - n 1000? 0 flush',
  'proxymap unix - - n - - proxymap',
  'smtp unix - - n - - smtp',
  'relay unix - - n - - smtp',
  'showq unix n - n - - showq',
  'error unix - - n - - error',
  'retry unix - - n - - error',
  'discard unix - - n - - discard',
  'anvil unix - - n - 1 anvil',
  'scache unix - - n - 1 scache',
  'postlog unix-dgram n - n - 1 postlogd',
].join('\n')}
`;

/**
 * Starts a real Postfix (Debian's) as an SMTP relay on loopback, in `dir` (its configuration, queue and log,
 * removed by `stop()`): it takes mail from loopback only and sends each domain of `routes` to the SMTP
 * server given for it (nothing is looked up in DNS, nothing leaves the machine). A message it cannot deliver
 * comes back as a delivery status notification to its envelope sender, routed the same way. Postfix's
 * master runs as root: `.ci/run` installs the package.
 */
export async function startPostfix(args: { dir: string; routes: Record<string, { host: string; port: number }> }): Promise<RunningPostfix> {
  if (!fs.existsSync(POSTFIX)) throw new Error(`Postfix is not installed (${POSTFIX}): apt-get install postfix (.ci/run does)`);
  if (process.getuid?.() !== 0) throw new Error("Postfix's master runs as root: this test needs root (as .ci/run has)");
  const conf = path.join(args.dir, 'conf');
  const maillog = path.join(args.dir, 'maillog');
  for (const sub of ['conf', 'queue', 'data']) fs.mkdirSync(path.join(args.dir, sub), { recursive: true });
  // Postfix's daemons run as its own user, which must reach its data folder (a temporary folder is 0700).
  fs.chmodSync(args.dir, 0o755);
  // Postfix's own files are its unprivileged user's.
  await runToEnd('chown', ['postfix', path.join(args.dir, 'data')]);
  const routes = Object.entries(args.routes)
    .map(([domain, to]) => `${domain}=smtp:[${to.host}]:${to.port}`)
    .join(', ');
  fs.writeFileSync(
    path.join(conf, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${path.join(args.dir, 'queue')}`,
      `data_directory = ${path.join(args.dir, 'data')}`,
      'mail_owner = postfix',
      'setgid_group = postdrop',
      'myhostname = relay.opsflow.test',
      'mydestination =',
      'inet_interfaces = loopback-only',
      'inet_protocols = ipv4',
      'mynetworks = 127.0.0.0/8',
      'smtpd_relay_restrictions = permit_mynetworks, reject',
      'alias_maps =',
      'alias_database =',
      'local_recipient_maps =',
      'smtputf8_enable = no',
      'disable_dns_lookups = yes',
      `transport_maps = inline:{ ${routes} }`,
      // Anything else is refused at once, never queued for a DNS lookup that cannot succeed here.
      'default_transport = error:no route outside the test',
      'queue_run_delay = 1s',
      'minimal_backoff_time = 1s',
      'maximal_backoff_time = 2s',
      `maillog_file_prefixes = ${args.dir}`,
      `maillog_file = ${maillog}`,
      '',
    ].join('\n'),
  );
  const readLog = () => (fs.existsSync(maillog) ? fs.readFileSync(maillog, 'utf8') : '');
  // A port free a moment ago can be taken before Postfix binds it: then another, three times at most.
  for (let attempt = 1; ; attempt++) {
    const smtpPort = await freePort();
    fs.writeFileSync(path.join(conf, 'master.cf'), masterCf(smtpPort));
    const master = spawnLogged(POSTFIX, ['-c', conf, 'start-fg'], path.join(args.dir, 'postfix.out'));
    const stop = async () => {
      await runToEnd(POSTFIX, ['-c', conf, 'stop']).catch(() => undefined);
      await master.stop();
    };
    const started = Date.now();
    let answered = false;
    while (!answered && master.exit() === null && Date.now() - started < 30000) {
      answered = await new Promise<boolean>((resolve) => {
        const socket = net.connect(smtpPort, '127.0.0.1');
        socket.once('data', (data) => {
          socket.destroy();
          resolve(data.toString().startsWith('220'));
        });
        socket.once('error', () => resolve(false));
        socket.setTimeout(2000, () => {
          socket.destroy();
          resolve(false);
        });
      });
      if (!answered) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (answered) {
      return {
        smtpPort,
        maillog: readLog,
        stop: async () => {
          await stop();
          fs.rmSync(args.dir, { recursive: true, force: true });
        },
      };
    }
    await stop();
    if (attempt === 3 || !/address already in use/i.test(readLog())) {
      const how = master.exit() === null ? 'did not answer within 30 s' : `exited while starting (${master.exit()})`;
      throw new Error(`Postfix on 127.0.0.1:${smtpPort} ${how}: ${readLog().slice(-1500) || master.said()}`);
    }
  }
}
