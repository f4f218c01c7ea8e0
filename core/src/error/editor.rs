//! The failures a model that calls Anthropic's text editor tool knows, in
//! the words of Anthropic's reference implementation
//! (`docs/contract.md#text-editor`).

use super::{ErrorKind, ToolError};

impl ToolError {
    /// An edit of a path where nothing is.
    #[cold]
    pub fn no_file_to_edit(path: &str) -> Self {
        Self::new(
            ErrorKind::Missing,
            format!(
                "File '{path}' does not exist. An edit changes a file that exists; to create \
                 one, use Write. Nothing was written."
            ),
        )
    }

    /// The same failure, told as the text editor's `command` on `path`
    /// tells it where the reference has words for it.
    pub fn as_text_editor_says(mut self, command: &str, path: &str) -> Self {
        self.message = match self.kind {
            ErrorKind::Missing => {
                format!("The path {path} does not exist. Please provide a valid path.")
            }
            ErrorKind::Exists if command == "create" => format!(
                "File already exists at: {path}. Cannot overwrite files using command `create`."
            ),
            ErrorKind::NoSuchChange if command == "undo_edit" => {
                format!("No edit history found for {path}.")
            }
            ErrorKind::IsDirectory if command != "view" => format!(
                "The path {path} is a directory and only the `view` command can be used on \
                 directories"
            ),
            _ => return self,
        };
        self
    }

    /// `undo_edit` of a path whose latest change changed other files too:
    /// undoing it here would undo them.
    #[cold]
    pub fn undo_of_many(path: &str, id: &str) -> Self {
        Self::new(
            ErrorKind::InvalidParam,
            format!(
                "The last change to {path} ({id}) changed other files too; undo_edit undoes \
                 one file's edit. Undo the whole change with revert {{\"change_id\": \"{id}\"}}. \
                 Nothing was changed."
            ),
        )
    }
}
