import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs (one object per line) for production; `LOG_PRETTY=1`
 * (set by `npm run dev`) renders them for humans with pino-pretty.
 */
export function createLogger(name: string, level = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  const pretty = process.env['LOG_PRETTY'] === '1';
  return pino({
    name,
    level,
    redact: { paths: ['*.apiKey', '*.authorization', 'headers.authorization'], remove: true },
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { colorize: true, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' },
          },
        }
      : {}),
  });
}
