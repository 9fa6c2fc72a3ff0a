/** Prism's language components register themselves on the global Prism; they export nothing. */
declare module 'prismjs/components/prism-solidity.js';
