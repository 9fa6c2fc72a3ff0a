/** The gas rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { GAS_EXAMPLES } from './gas.examples.ts';
import * as rules from './gas.ts';

describeRuleExamples(rules, GAS_EXAMPLES);
