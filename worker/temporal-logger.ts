import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { Logger } from '../core/logger.ts';

/**
 * Temporal's SDK, workflow `log` and activity `log` all write through the
 * Runtime's logger; this adapter sends them to pino so the worker's output is
 * the same one-JSON-object-per-line as the gateway's.
 */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly pino: Logger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const method = level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
    this.pino[method](meta ?? {}, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
