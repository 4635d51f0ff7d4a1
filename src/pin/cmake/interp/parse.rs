//! Files parsed into blocks.

use super::*;

/// A parsed file: blocks matched.
#[derive(Debug)]
pub(in crate::pin::cmake) enum Node {
    Cmd(Invocation),
    If(Vec<(Option<Invocation>, Vec<Node>)>),
    Foreach(Invocation, Vec<Node>),
    While(Invocation, Vec<Node>),
    Function(Invocation, Rc<Vec<Node>>, bool),
    Block(Invocation, Vec<Node>),
}

/// Match `if`/`endif` and the other block commands. Errors: (line, message).
pub(in crate::pin::cmake) fn parse(
    invocations: Vec<Invocation>,
) -> Result<Vec<Node>, (u32, String)> {
    struct Open {
        kind: String,
        head: Invocation,
        branches: Vec<(Option<Invocation>, Vec<Node>)>,
    }
    let mut root: Vec<Node> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    fn current<'a>(root: &'a mut Vec<Node>, stack: &'a mut [Open]) -> &'a mut Vec<Node> {
        match stack.last_mut().and_then(|o| o.branches.last_mut()) {
            Some((_, body)) => body,
            None => root,
        }
    }
    for inv in invocations {
        let name = inv.name.to_ascii_lowercase();
        let line = inv.line;
        match name.as_str() {
            "if" | "foreach" | "while" | "function" | "macro" | "block" => {
                if stack.len() >= MAX_NESTING {
                    return Err((line, format!("blocks nested deeper than {MAX_NESTING}")));
                }
                let cond = (name == "if").then(|| inv.clone());
                stack.push(Open {
                    kind: name,
                    head: inv,
                    branches: vec![(cond, Vec::new())],
                });
            }
            "elseif" | "else" => match stack.last_mut() {
                Some(o) if o.kind == "if" => {
                    o.branches
                        .push(((name == "elseif").then_some(inv), Vec::new()));
                }
                _ => return Err((line, format!("{name}() outside if()"))),
            },
            "endif" | "endforeach" | "endwhile" | "endfunction" | "endmacro" | "endblock" => {
                let want = name.trim_start_matches("end");
                let Some(mut open) = stack.pop().filter(|o| o.kind == want) else {
                    return Err((line, format!("{name}() without a matching {want}()")));
                };
                let node = if want == "if" {
                    Node::If(open.branches)
                } else {
                    let body = open.branches.pop().map(|b| b.1).unwrap_or_default();
                    match want {
                        "foreach" => Node::Foreach(open.head, body),
                        "while" => Node::While(open.head, body),
                        "function" | "macro" => {
                            Node::Function(open.head, Rc::new(body), want == "macro")
                        }
                        _ => Node::Block(open.head, body),
                    }
                };
                current(&mut root, &mut stack).push(node);
            }
            _ => current(&mut root, &mut stack).push(Node::Cmd(inv)),
        }
    }
    if let Some(open) = stack.last() {
        return Err((
            open.head.line,
            format!("{}() without end{}()", open.head.name, open.kind),
        ));
    }
    Ok(root)
}
