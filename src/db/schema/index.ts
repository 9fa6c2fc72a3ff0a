export * from './identity.ts';
export * from './platform.ts';
export * from './scanner.ts';
export * from './tickets.ts';
