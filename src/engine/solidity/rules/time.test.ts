/** The time rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { TIME_EXAMPLES } from './time.examples.ts';
import * as rules from './time.ts';

describeRuleExamples(rules, TIME_EXAMPLES);
