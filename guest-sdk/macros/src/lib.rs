//! `#[hookrt_sdk::hook]`: exports an `impl Hook for T` block as a hook component.
//!
//! The attribute reads the names of the methods the block implements and hands
//! them to `hookrt_sdk::__export_hook!`, which turns each into its subscription
//! (`message_completed` -> `message.completed`, `actions_requested_observed` ->
//! `observe:actions.requested`, `any` -> `*`). A misspelled method is not a
//! member of the `Hook` trait, so it fails to compile where the author wrote it.
//! When the block has no `type Config`, the attribute adds
//! `type Config = hookrt_sdk::NoConfig;` (any config accepted).

use proc_macro::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};

/// Export an `impl Hook for MyHook { ... }` block as the component's hook.
#[proc_macro_attribute]
pub fn hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(first) = attr.into_iter().next() {
        return error(
            first.span(),
            "#[hookrt_sdk::hook] takes no arguments: write `#[hookrt_sdk::hook]` above `impl Hook for MyHook { ... }`",
        );
    }
    match expand(item) {
        Ok(out) => out,
        Err((span, message)) => error(span, &message),
    }
}

fn expand(item: TokenStream) -> Result<TokenStream, (Span, String)> {
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let usage = "#[hookrt_sdk::hook] goes on `impl Hook for MyHook { ... }`";
    let body_at = tokens
        .iter()
        .rposition(|t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace))
        .ok_or_else(|| (Span::call_site(), usage.to_owned()))?;
    let is_ident =
        |t: &TokenTree, word: &str| matches!(t, TokenTree::Ident(i) if i.to_string() == word);
    if !tokens[..body_at].iter().any(|t| is_ident(t, "impl")) {
        return Err((tokens[0].span(), usage.to_owned()));
    }
    let for_at = tokens[..body_at]
        .iter()
        .position(|t| is_ident(t, "for"))
        .ok_or_else(|| (tokens[0].span(), usage.to_owned()))?;
    if !tokens[..for_at].iter().any(|t| is_ident(t, "Hook")) {
        return Err((
            tokens[0].span(),
            format!("{usage}: this block implements another trait"),
        ));
    }
    let self_ty: TokenStream = tokens[for_at + 1..body_at].iter().cloned().collect();
    if self_ty.is_empty() {
        return Err((tokens[for_at].span(), usage.to_owned()));
    }
    let TokenTree::Group(body) = &tokens[body_at] else {
        unreachable!("found as a brace group above")
    };
    let items: Vec<TokenTree> = body.stream().into_iter().collect();
    let mut methods = Vec::new();
    let mut has_config = false;
    for pair in items.windows(2) {
        if is_ident(&pair[0], "fn")
            && let TokenTree::Ident(name) = &pair[1]
            && name.to_string() != "configure"
        {
            methods.push(name.clone());
        }
        if is_ident(&pair[0], "type") && is_ident(&pair[1], "Config") {
            has_config = true;
        }
    }
    if methods.is_empty() {
        return Err((
            body.span_open(),
            "this hook handles no event: implement at least one `Hook` method, e.g. `fn message_completed(..)`, or `fn any(..)` for every event".to_owned(),
        ));
    }
    let mut new_body: TokenStream = items.into_iter().collect();
    if !has_config {
        let default: TokenStream = "type Config = ::hookrt_sdk::NoConfig;"
            .parse()
            .expect("static tokens");
        let mut with = default;
        with.extend(new_body);
        new_body = with;
    }
    let mut out: TokenStream = tokens[..body_at].iter().cloned().collect();
    let mut group = Group::new(Delimiter::Brace, new_body);
    group.set_span(body.span());
    out.extend([TokenTree::Group(group)]);
    out.extend(tokens[body_at + 1..].iter().cloned());

    out.extend(export_call(self_ty, &methods));
    Ok(out)
}

/// The call that exports the hook: `::hookrt_sdk::__export_hook!(SelfTy; name, ...);`.
fn export_call(self_ty: TokenStream, methods: &[Ident]) -> TokenStream {
    let mut out = TokenStream::new();
    let mut args = self_ty;
    args.extend(";".parse::<TokenStream>().expect("static tokens"));
    for (i, name) in methods.iter().enumerate() {
        if i > 0 {
            args.extend(",".parse::<TokenStream>().expect("static tokens"));
        }
        args.extend([TokenTree::Ident(Ident::new(&name.to_string(), name.span()))]);
    }
    out.extend(
        "::hookrt_sdk::__export_hook!"
            .parse::<TokenStream>()
            .expect("static tokens"),
    );
    out.extend([
        TokenTree::Group(Group::new(Delimiter::Parenthesis, args)),
        ";".parse::<TokenStream>()
            .expect("static tokens")
            .into_iter()
            .next()
            .expect("one token"),
    ]);
    out
}

fn error(span: Span, message: &str) -> TokenStream {
    let mut out: TokenStream = "::core::compile_error!".parse().expect("static tokens");
    let mut text = proc_macro::Literal::string(message);
    text.set_span(span);
    let mut group = Group::new(Delimiter::Parenthesis, TokenTree::Literal(text).into());
    group.set_span(span);
    out.extend([TokenTree::Group(group)]);
    out.extend(";".parse::<TokenStream>().expect("static tokens"));
    out
}
