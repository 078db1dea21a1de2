export {};
//# sourceMappingURL=dependencies.js.map