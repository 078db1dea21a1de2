/**
 * The skills rows.
 */
import { ValidateSkill } from '../../protocol/protocol.skills.js';
import { implement, type Implementation } from '../dispatch.js';
import { validateInlineSkill, validateSkillFolder, type SkillCheck } from './validate.js';

const asResult = ({ valid, errors, warnings }: SkillCheck) => ({ valid, errors, warnings });

export function skillImplementations(): Implementation[] {
	return [
		implement(ValidateSkill, async ({ path, skill_md, files }) =>
			asResult(path !== undefined ? await validateSkillFolder(path) : validateInlineSkill(skill_md ?? '', files)),
		),
	];
}
