import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * Structured JSON logs (one object per line) for production; `LOG_PRETTY=1`
 * (set by `npm run dev`) renders them for humans with pino-pretty.
 */
export function createLogger(name: string, config: Pick<Config, 'logLevel' | 'logPretty'>): Logger {
  return pino({
    name,
    level: config.logLevel,
    redact: { paths: ['*.apiKey', '*.authorization', 'headers.authorization'], remove: true },
    ...(config.logPretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { colorize: true, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' },
          },
        }
      : {}),
  });
}
