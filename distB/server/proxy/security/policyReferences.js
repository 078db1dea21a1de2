export function referencesOf(policies) {
    const attributes = new Set();
    let wholeContext = false;
    /** An expression that attributes are read from: a bare variable there needs only that attribute. */
    const visitTarget = (node) => {
        if (!isVariable(node))
            visit(node);
    };
    const visit = (node) => {
        if (Array.isArray(node))
            return node.forEach(visit);
        if (typeof node !== 'object' || node === null)
            return;
        const expression = node;
        if ('Value' in expression)
            return; // a literal
        const read = expression['.'];
        if (read && typeof read.attr === 'string') {
            attributes.add(read.attr);
            return visitTarget(read.left);
        }
        const has = expression.has;
        if (has && has.attr !== undefined) {
            for (const attr of [has.attr].flat())
                attributes.add(attr);
            return visitTarget(has.left);
        }
        if (expression.Var === 'context')
            wholeContext = true;
        for (const value of Object.values(expression))
            visit(value);
    };
    for (const policy of policies)
        visit(policy.conditions);
    return { attributes, wholeContext };
}
function isVariable(node) {
    return typeof node === 'object' && node !== null && typeof node.Var === 'string';
}
/** The attributes of `record` that `references` name. */
export function referenced(record, references) {
    const kept = {};
    for (const name in record)
        if (references.attributes.has(name))
            kept[name] = record[name];
    return kept;
}
//# sourceMappingURL=policyReferences.js.map