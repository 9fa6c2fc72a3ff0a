#!/usr/bin/env node
// The `vigil` command: loads the TypeScript sources through tsx's loader and runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main(process.argv);
