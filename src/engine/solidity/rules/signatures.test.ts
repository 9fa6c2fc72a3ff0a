/** The signatures rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { SIGNATURES_EXAMPLES } from './signatures.examples.ts';
import * as rules from './signatures.ts';

describeRuleExamples(rules, SIGNATURES_EXAMPLES);
