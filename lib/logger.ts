import pino, { Logger } from 'pino';

export type { Logger };

/** Paths pino blanks in every line, so a secret passed by mistake never reaches a log. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.smtpPassword',
  '*.servicePassword',
  '*.token',
  '*.secret',
];

/** One structured JSON logger for the process; children carry the request id and user id. */
export function createLogger(args: { level: string; name: string; destination?: pino.DestinationStream }): Logger {
  const options: pino.LoggerOptions = {
    name: args.name,
    level: args.level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { pid: process.pid, component: args.name },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return args.destination ? pino(options, args.destination) : pino(options);
}
