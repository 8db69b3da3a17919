//! CEL `x-kubernetes-validations` rules.
//! OWNER: validation engineer.
