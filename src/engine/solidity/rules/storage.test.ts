/** The storage rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { STORAGE_EXAMPLES } from './storage.examples.ts';
import * as rules from './storage.ts';

describeRuleExamples(rules, STORAGE_EXAMPLES);
