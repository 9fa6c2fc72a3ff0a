export * from './ai.ts';
export * from './identity.ts';
export * from './jobs.ts';
export * from './notifications.ts';
export * from './platform.ts';
export * from './scanner.ts';
export * from './sourcehost.ts';
export * from './tickets.ts';
